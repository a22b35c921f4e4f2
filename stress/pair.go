package stress

import (
	"math/rand/v2"
	"runtime"
	"sync/atomic"

	"github.com/cellrate/cellrate/atomic128"
)

// Pair is the API of atomic128.Uint64Pair, so that runs can drive either a
// real cell or the Broken one.
type Pair interface {
	Load() (v1, v2 uint64)
	Store(v1, v2 uint64)
	Swap(new1, new2 uint64) (old1, old2 uint64)
	CompareAndSwap(old1, old2, new1, new2 uint64) bool
}

// Broken is a deliberately wrong Pair: each half is atomic on its own, but
// a pair is read, compared and written as two separate words. Its
// operations yield now and then between the halves, where a preemption
// could land, so that the runs show they catch torn reads, lost updates and
// non-atomic compare-and-swap. It must never pass a stress run.
type Broken struct{ a, b atomic.Uint64 }

// BrokenCAS is a subtler wrong Pair: Load, Store and Swap are those of a
// real atomic128 cell, so no pair is ever torn, but CompareAndSwap is a
// Load, a comparison and a Store, with a yield between them: two callers
// can both succeed from the same pair. Only the runs that check updates
// (NoLostUpdate, Linearizable) can catch it.
type BrokenCAS struct{ p atomic128.Uint64Pair }

// Load is atomic.
func (x *BrokenCAS) Load() (v1, v2 uint64) { return x.p.Load() }

// Store is atomic.
func (x *BrokenCAS) Store(v1, v2 uint64) { x.p.Store(v1, v2) }

// Swap is atomic.
func (x *BrokenCAS) Swap(new1, new2 uint64) (old1, old2 uint64) { return x.p.Swap(new1, new2) }

// CompareAndSwap is not: another writer can slip in between its Load and
// its Store.
func (x *BrokenCAS) CompareAndSwap(old1, old2, new1, new2 uint64) bool {
	if a, b := x.p.Load(); a != old1 || b != old2 {
		return false
	}
	maybeYield()
	x.p.Store(new1, new2)
	return true
}

func maybeYield() {
	if rand.Uint32()&3 == 0 {
		runtime.Gosched()
	}
}

// Load reads the two halves one after the other.
func (x *Broken) Load() (v1, v2 uint64) {
	v1 = x.a.Load()
	maybeYield()
	return v1, x.b.Load()
}

// Store writes the two halves one after the other.
func (x *Broken) Store(v1, v2 uint64) {
	x.a.Store(v1)
	maybeYield()
	x.b.Store(v2)
}

// Swap swaps each half on its own.
func (x *Broken) Swap(new1, new2 uint64) (old1, old2 uint64) {
	old1 = x.a.Swap(new1)
	maybeYield()
	return old1, x.b.Swap(new2)
}

// CompareAndSwap compares both halves, then writes both: another writer can
// slip in between the comparison and the writes.
func (x *Broken) CompareAndSwap(old1, old2, new1, new2 uint64) bool {
	if x.a.Load() != old1 || x.b.Load() != old2 {
		return false
	}
	maybeYield()
	x.a.Store(new1)
	x.b.Store(new2)
	return true
}
