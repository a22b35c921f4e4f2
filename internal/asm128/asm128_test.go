//go:build gc && !purego && (amd64 || arm64)

package asm128

import (
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/cellrate/cellrate/asm"
	"github.com/cellrate/cellrate/internal/pairtest"
)

type routineSet struct {
	name  string
	ok    bool
	cas   func(p *[2]uint64, old1, old2, new1, new2 uint64) bool
	load  func(p *[2]uint64) (v1, v2 uint64)
	store func(p *[2]uint64, v1, v2 uint64)
	swap  func(p *[2]uint64, new1, new2 uint64) (old1, old2 uint64)
}

// aligned16 returns a 16-byte aligned pair inside a fresh buffer.
func aligned16() *[2]uint64 {
	buf := new([3]uint64)
	if uintptr(unsafe.Pointer(&buf[0]))&15 == 0 {
		return (*[2]uint64)(buf[0:2])
	}
	return (*[2]uint64)(buf[1:3])
}

// TestRoutinesMatchReference runs random operations on edge and random
// values through each routine set and through the reference functions, and
// requires the same results and the same memory after each step.
func TestRoutinesMatchReference(t *testing.T) {
	for _, rs := range routineSets {
		t.Run(rs.name, func(t *testing.T) {
			if !rs.ok {
				t.Skip("CPU lacks the instructions")
			}
			r := rand.New(rand.NewPCG(1, 2))
			p, ref := aligned16(), new([2]uint64)
			for i := 0; i < 100000; i++ {
				a, b := pairtest.Value(r), pairtest.Value(r)
				switch op := r.IntN(5); op {
				case 0, 1: // a CAS that can succeed half the time
					o1, o2 := ref[0], ref[1]
					if op == 1 {
						o1, o2 = pairtest.Value(r), pairtest.Value(r)
					}
					if got, want := rs.cas(p, o1, o2, a, b), asm.RefCas(ref, o1, o2, a, b); got != want {
						t.Fatalf("step %d: cas(%#x, %#x, %#x, %#x) = %v, reference %v", i, o1, o2, a, b, got, want)
					}
				case 2:
					g1, g2 := rs.load(p)
					w1, w2 := asm.RefLoad(ref)
					if g1 != w1 || g2 != w2 {
						t.Fatalf("step %d: load = %#x, %#x; reference %#x, %#x", i, g1, g2, w1, w2)
					}
				case 3:
					rs.store(p, a, b)
					asm.RefStore(ref, a, b)
				case 4:
					g1, g2 := rs.swap(p, a, b)
					w1, w2 := asm.RefSwap(ref, a, b)
					if g1 != w1 || g2 != w2 {
						t.Fatalf("step %d: swap = %#x, %#x; reference %#x, %#x", i, g1, g2, w1, w2)
					}
				}
				if *p != *ref {
					t.Fatalf("step %d: memory %#x, reference %#x", i, *p, *ref)
				}
			}
		})
	}
}
