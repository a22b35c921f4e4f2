//go:build gc && !purego && arm64

package atomic128

import (
	"testing"

	"github.com/cellrate/cellrate/asm"
	"github.com/cellrate/cellrate/internal/path128"
)

// benchBaselines runs, for op, the floors the typed API is measured
// against: the bare instructions (bare/) and the raw routines the typed API
// dispatches to (asm/). Each loop calls the assembly directly, as the typed
// methods do.
func benchBaselines(b *testing.B, op string) {
	p := new(Uint64Pair).addr()
	var s uint64
	b.Run("bare/CASPAL", func(b *testing.B) {
		skipUnless(b, path128.CASP)
		for b.Loop() {
			asm.BareCASPAL(p)
		}
	})
	b.Run("bare/LDAXPSTLXP", func(b *testing.B) {
		skipUnless(b, path128.LLSC)
		for b.Loop() {
			asm.BareLDAXPSTLXP(p)
		}
	})
	switch op {
	case "Load":
		b.Run("asm/LoadCASP", func(b *testing.B) {
			skipUnless(b, path128.CASP)
			for b.Loop() {
				v, _ := asm.LoadCASP(p)
				s += v
			}
		})
		b.Run("asm/LoadLLSC", func(b *testing.B) {
			skipUnless(b, path128.LLSC)
			for b.Loop() {
				v, _ := asm.LoadLLSC(p)
				s += v
			}
		})
	case "Store":
		b.Run("asm/StoreCASP", func(b *testing.B) {
			skipUnless(b, path128.CASP)
			var i uint64
			for b.Loop() {
				i++
				asm.StoreCASP(p, i, i)
			}
		})
		b.Run("asm/StoreLLSC", func(b *testing.B) {
			skipUnless(b, path128.LLSC)
			var i uint64
			for b.Loop() {
				i++
				asm.StoreLLSC(p, i, i)
			}
		})
	case "Swap":
		b.Run("asm/SwapCASP", func(b *testing.B) {
			skipUnless(b, path128.CASP)
			var i uint64
			for b.Loop() {
				i++
				v, _ := asm.SwapCASP(p, i, i)
				s += v
			}
		})
		b.Run("asm/SwapLLSC", func(b *testing.B) {
			skipUnless(b, path128.LLSC)
			var i uint64
			for b.Loop() {
				i++
				v, _ := asm.SwapLLSC(p, i, i)
				s += v
			}
		})
	case "CompareAndSwap":
		b.Run("asm/CasCASP", func(b *testing.B) {
			skipUnless(b, path128.CASP)
			*p = [2]uint64{}
			var i uint64
			for b.Loop() {
				asm.CasCASP(p, i, i, i+1, i+1)
				i++
			}
		})
		b.Run("asm/CasLLSC", func(b *testing.B) {
			skipUnless(b, path128.LLSC)
			*p = [2]uint64{}
			var i uint64
			for b.Loop() {
				asm.CasLLSC(p, i, i, i+1, i+1)
				i++
			}
		})
	}
	sinkA = s
}
