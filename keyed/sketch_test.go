package keyed

import (
	"math/rand/v2"
	"testing"
)

// TestSketchSpreads: a key's two registers come from independent mixes of
// its tag, each spread over the whole sketch: random tags reach nearly
// every register through either mix, and a tag's two registers coincide
// about as often as two random ones would. A mix that collapsed (every
// tag's second register one of a few) would let a flood of evicted keys
// delay most innocent keys, which only need to meet the flood in both.
func TestSketchSpreads(t *testing.T) {
	const regs, tags = 1024, 8 * 1024
	s := make(sketch, regs)
	r := rand.New(rand.NewPCG(1, 2))
	var first, second [regs]bool
	same := 0
	for range tags {
		i, j := s.regs(r.Uint64())
		first[i], second[j] = true, true
		if i == j {
			same++
		}
	}
	count := func(b *[regs]bool) (n int) {
		for _, v := range b {
			if v {
				n++
			}
		}
		return n
	}
	// 8 tags a register: each is missed with probability e^-8, about 0.3 of 1024.
	if f, g := count(&first), count(&second); f < regs-8 || g < regs-8 {
		t.Fatalf("%d tags reached %d and %d of %d registers", tags, f, g, regs)
	}
	if same > 4*tags/regs { // about tags/regs = 8 expected
		t.Fatalf("%d of %d tags have one register twice", same, tags)
	}
}
