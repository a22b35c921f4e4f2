package atomic128

import (
	"sync/atomic"
	"unsafe"

	"github.com/cellrate/cellrate/internal/path128"
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
// fallback needs, and all 32-bit targets give).
func (x *Uint64Pair) addr() *[2]uint64 {
	p := unsafe.Pointer(&x.v)
	return (*[2]uint64)(unsafe.Add(p, uintptr(p)&8))
}

// Load atomically loads and returns the pair stored in x.
func (x *Uint64Pair) Load() (v1, v2 uint64) {
	p := x.addr()
	switch path128.Active {
	case primary:
		v1, v2 = loadPrimary(p)
	case secondary:
		v1, v2 = loadSecondary(p)
	default:
		v1, v2 = fallbackLoad(p)
	}
	raceAcquire(p)
	return v1, v2
}

// Store atomically stores the pair v1, v2 into x.
func (x *Uint64Pair) Store(v1, v2 uint64) {
	p := x.addr()
	raceReleaseMerge(p)
	switch path128.Active {
	case primary:
		storePrimary(p, v1, v2)
	case secondary:
		storeSecondary(p, v1, v2)
	default:
		fallbackStore(p, v1, v2)
	}
}

// Swap atomically stores new1, new2 into x and returns the previous pair.
func (x *Uint64Pair) Swap(new1, new2 uint64) (old1, old2 uint64) {
	p := x.addr()
	raceReleaseMerge(p)
	switch path128.Active {
	case primary:
		old1, old2 = swapPrimary(p, new1, new2)
	case secondary:
		old1, old2 = swapSecondary(p, new1, new2)
	default:
		old1, old2 = fallbackSwap(p, new1, new2)
	}
	raceAcquire(p)
	return old1, old2
}

// CompareAndSwap executes the compare-and-swap operation for x: if x holds
// old1, old2 it stores new1, new2 and reports true; otherwise it leaves x
// unchanged and reports false.
func (x *Uint64Pair) CompareAndSwap(old1, old2, new1, new2 uint64) (swapped bool) {
	p := x.addr()
	raceReleaseMerge(p)
	switch path128.Active {
	case primary:
		swapped = casPrimary(p, old1, old2, new1, new2)
	case secondary:
		swapped = casSecondary(p, old1, old2, new1, new2)
	default:
		swapped = fallbackCas(p, old1, old2, new1, new2)
	}
	raceAcquire(p)
	return swapped
}
