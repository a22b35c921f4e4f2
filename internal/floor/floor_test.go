//go:build gc && !purego && (amd64 || arm64)

package floor

import (
	"testing"
	"unsafe"
)

// aligned16 returns a 16-byte aligned pair inside a fresh buffer.
func aligned16() *[2]uint64 {
	buf := new([3]uint64)
	if uintptr(unsafe.Pointer(&buf[0]))&15 == 0 {
		return (*[2]uint64)(buf[0:2])
	}
	return (*[2]uint64)(buf[1:3])
}

// TestFloorsLeaveMemory checks that the floors do not change the pair (a
// compare-and-swap of (0, 0) with (0, 0) writes back what it read, and so
// does a store-exclusive of the value loaded).
func TestFloorsLeaveMemory(t *testing.T) {
	for _, f := range floors {
		if !f.ok {
			continue
		}
		for _, v := range [][2]uint64{{0, 0}, {1, 2}, {^uint64(0), 0}} {
			p := aligned16()
			*p = v
			f.fn(p)
			if *p != v {
				t.Errorf("%s changed %#x to %#x", f.name, v, *p)
			}
		}
	}
}

func BenchmarkFloor(b *testing.B) {
	p := aligned16()
	for _, f := range floors {
		b.Run(f.name, func(b *testing.B) {
			if !f.ok {
				b.Skip("CPU lacks the instruction")
			}
			for b.Loop() {
				f.fn(p)
			}
		})
	}
}
