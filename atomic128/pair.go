package atomic128

import (
	"sync/atomic"
	"unsafe"

	"github.com/cellrate/cellrate/internal/race"
)

// A Uint64Pair is an atomic pair of uint64 values.
// The zero value is a pair of zeros, ready to use.
//
// It occupies 24 bytes on every target (asserted by a test): Go aligns it to
// 8 bytes, and the operations use the 16-byte aligned half of its three
// words, so callers never align anything. It must not be copied after first
// use; go vet's copylocks check reports copies.
type Uint64Pair struct {
	_ noCopy
	// 8-byte alignment on 32-bit targets too, for the fallback's 64-bit
	// atomics (Go aligns a uint64 to 4 bytes there).
	_ [0]atomic.Uint64
	v [3]uint64
}

// noCopy makes go vet's copylocks check report copies of a Uint64Pair.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}

// addr returns the 16-byte aligned pair inside x (8-byte aligned is all the
// fallback needs, and all 32-bit targets give). v is x's first field, so the
// pair starts at x or 8 bytes after it; written on x itself, the expression
// is cheap enough for the methods below to inline.
func (x *Uint64Pair) addr() *[2]uint64 {
	return (*[2]uint64)(unsafe.Add(unsafe.Pointer(x), uintptr(unsafe.Pointer(x))&8))
}

// The methods make one call, to a dispatch routine (dispatch_*.s: a compare
// of path128.Active and a jump to the path's routine in package asm, or to
// the fallback; dispatch_other.go where there is no assembly), so that they
// inline into their callers: a limiter's hot path is that compare and the
// instructions. Under the race detector they take the annotated versions
// below instead (race.Enabled is a constant, so the inliner counts only the
// branch a build keeps).

// Load atomically loads and returns the pair stored in x.
func (x *Uint64Pair) Load() (v1, v2 uint64) {
	if race.Enabled {
		return x.loadRace()
	}
	return load(x.addr())
}

// Store atomically stores the pair v1, v2 into x.
func (x *Uint64Pair) Store(v1, v2 uint64) {
	if race.Enabled {
		x.storeRace(v1, v2)
		return
	}
	store(x.addr(), v1, v2)
}

// Swap atomically stores new1, new2 into x and returns the previous pair.
func (x *Uint64Pair) Swap(new1, new2 uint64) (old1, old2 uint64) {
	if race.Enabled {
		return x.swapRace(new1, new2)
	}
	return swap(x.addr(), new1, new2)
}

// CompareAndSwap executes the compare-and-swap operation for x: if x holds
// old1, old2 it stores new1, new2 and reports true; otherwise it leaves x
// unchanged and reports false.
func (x *Uint64Pair) CompareAndSwap(old1, old2, new1, new2 uint64) (swapped bool) {
	if race.Enabled {
		return x.casRace(old1, old2, new1, new2)
	}
	return cas(x.addr(), old1, old2, new1, new2)
}

// The operations with their race annotations (race.go): every operation
// that may write releases before the instruction, every operation that
// reads acquires after it.

func (x *Uint64Pair) loadRace() (v1, v2 uint64) {
	p := x.addr()
	v1, v2 = load(p)
	raceAcquire(p)
	return v1, v2
}

func (x *Uint64Pair) storeRace(v1, v2 uint64) {
	p := x.addr()
	raceReleaseMerge(p)
	store(p, v1, v2)
}

func (x *Uint64Pair) swapRace(new1, new2 uint64) (old1, old2 uint64) {
	p := x.addr()
	raceReleaseMerge(p)
	old1, old2 = swap(p, new1, new2)
	raceAcquire(p)
	return old1, old2
}

func (x *Uint64Pair) casRace(old1, old2, new1, new2 uint64) (swapped bool) {
	p := x.addr()
	raceReleaseMerge(p)
	swapped = cas(p, old1, old2, new1, new2)
	raceAcquire(p)
	return swapped
}
