//go:build gc && !purego && amd64

package atomic128

import (
	"testing"

	"github.com/cellrate/cellrate/asm"
	"github.com/cellrate/cellrate/internal/path128"
)

// benchBaselines runs, for op, the floors the typed API is measured
// against: the bare instruction (bare/) and the raw routine the typed API
// dispatches to (asm/). Each loop calls the assembly directly, as the typed
// methods do.
func benchBaselines(b *testing.B, op string) {
	p := new(Uint64Pair).addr()
	var s uint64
	bareCMPXCHG16B := func(b *testing.B) {
		skipUnless(b, path128.CX16)
		for b.Loop() {
			asm.BareCMPXCHG16B(p)
		}
	}
	switch op {
	case "Load":
		b.Run("bare/VMOVDQA", func(b *testing.B) {
			skipUnless(b, path128.CX16VMOVDQA)
			for b.Loop() {
				asm.BareVMOVDQA(p)
			}
		})
		b.Run("bare/CMPXCHG16B", bareCMPXCHG16B)
		b.Run("asm/LoadVMOVDQA", func(b *testing.B) {
			skipUnless(b, path128.CX16VMOVDQA)
			for b.Loop() {
				v, _ := asm.LoadVMOVDQA(p)
				s += v
			}
		})
		b.Run("asm/LoadCX16", func(b *testing.B) {
			skipUnless(b, path128.CX16)
			for b.Loop() {
				v, _ := asm.LoadCX16(p)
				s += v
			}
		})
	case "Store":
		b.Run("bare/CMPXCHG16B", bareCMPXCHG16B)
		b.Run("asm/StoreCX16", func(b *testing.B) {
			skipUnless(b, path128.CX16)
			var i uint64
			for b.Loop() {
				i++
				asm.StoreCX16(p, i, i)
			}
		})
	case "Swap":
		b.Run("bare/CMPXCHG16B", bareCMPXCHG16B)
		b.Run("asm/SwapCX16", func(b *testing.B) {
			skipUnless(b, path128.CX16)
			var i uint64
			for b.Loop() {
				i++
				v, _ := asm.SwapCX16(p, i, i)
				s += v
			}
		})
	case "CompareAndSwap":
		b.Run("bare/CMPXCHG16B", bareCMPXCHG16B)
		b.Run("asm/CasCX16", func(b *testing.B) {
			skipUnless(b, path128.CX16)
			*p = [2]uint64{}
			var i uint64
			for b.Loop() {
				asm.CasCX16(p, i, i, i+1, i+1)
				i++
			}
		})
	}
	sinkA = s
}
