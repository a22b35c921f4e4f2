package atomic128

import (
	"sync"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// lockStripes is the number of locks the fallback hashes pair addresses to;
// a power of two so the hash is a mask.
const lockStripes = 64

// stripe is one lock on its own cache line, so that pairs hashed to
// different stripes never share a line.
type stripe struct {
	mu sync.Mutex
	_  cpu.CacheLinePad
}

var stripes [lockStripes]stripe

func lockFor(p *[2]uint64) *sync.Mutex {
	a := uintptr(unsafe.Pointer(p)) >> 4
	return &stripes[(a^a>>6)&(lockStripes-1)].mu
}

func load(p *[2]uint64) (v1, v2 uint64) {
	mu := lockFor(p)
	mu.Lock()
	v1, v2 = p[0], p[1]
	mu.Unlock()
	return
}

func store(p *[2]uint64, v1, v2 uint64) {
	mu := lockFor(p)
	mu.Lock()
	p[0], p[1] = v1, v2
	mu.Unlock()
}

func swap(p *[2]uint64, new1, new2 uint64) (old1, old2 uint64) {
	mu := lockFor(p)
	mu.Lock()
	old1, old2 = p[0], p[1]
	p[0], p[1] = new1, new2
	mu.Unlock()
	return
}

func cas(p *[2]uint64, old1, old2, new1, new2 uint64) bool {
	mu := lockFor(p)
	mu.Lock()
	ok := p[0] == old1 && p[1] == old2
	if ok {
		p[0], p[1] = new1, new2
	}
	mu.Unlock()
	return ok
}

// Path names the implementation that runs the operations.
func Path() string { return "fallback" }

// LockFree reports whether the operations are lock-free on this CPU.
func LockFree() bool { return false }
