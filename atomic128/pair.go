package atomic128

import "unsafe"

// A Uint64Pair is an atomic pair of uint64 values.
// The zero value is a pair of zeros.
//
// It occupies 24 bytes: Go aligns it to 8 bytes, and the operations use the
// 16-byte aligned half of its three words, so callers never align anything.
type Uint64Pair struct {
	_ noCopy
	v [3]uint64
}

// noCopy makes go vet's copylocks check report copies of a Uint64Pair.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}

// addr returns the 16-byte aligned pair inside x.
func (x *Uint64Pair) addr() *[2]uint64 {
	p := unsafe.Pointer(&x.v[0])
	if uintptr(p)&15 != 0 {
		p = unsafe.Pointer(&x.v[1])
	}
	return (*[2]uint64)(p)
}

// Load atomically loads and returns the pair stored in x.
func (x *Uint64Pair) Load() (v1, v2 uint64) {
	return load(x.addr())
}

// Store atomically stores the pair v1, v2 into x.
func (x *Uint64Pair) Store(v1, v2 uint64) {
	store(x.addr(), v1, v2)
}

// Swap atomically stores new1, new2 into x and returns the previous pair.
func (x *Uint64Pair) Swap(new1, new2 uint64) (old1, old2 uint64) {
	return swap(x.addr(), new1, new2)
}

// CompareAndSwap executes the compare-and-swap operation for x: if x holds
// old1, old2 it stores new1, new2 and reports true; otherwise it leaves x
// unchanged and reports false.
func (x *Uint64Pair) CompareAndSwap(old1, old2, new1, new2 uint64) (swapped bool) {
	return cas(x.addr(), old1, old2, new1, new2)
}
