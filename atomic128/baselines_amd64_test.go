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

// BenchmarkRatio measures the speed targets as ratios in one run (see
// paired): the typed API against the bare instruction and against the raw
// routine, and the CMPXCHG16B load against the VMOVDQA load.
func BenchmarkRatio(b *testing.B) {
	p := new(Uint64Pair).addr()
	var s uint64
	typedLoad := func(path path128.Path) func(n int) {
		x := new(Uint64Pair)
		return func(n int) {
			path128.Active = path // checked by skipUnless, restored by usePath
			for range n {
				v, _ := x.Load()
				s += v
			}
		}
	}
	bareVMOVDQA := func(n int) {
		for range n {
			asm.BareVMOVDQA(p)
		}
	}
	asmLoadVMOVDQA := func(n int) {
		for range n {
			v, _ := asm.LoadVMOVDQA(p)
			s += v
		}
	}
	asmLoadCX16 := func(n int) {
		for range n {
			v, _ := asm.LoadCX16(p)
			s += v
		}
	}
	bareCMPXCHG16B := func(n int) {
		for range n {
			asm.BareCMPXCHG16B(p)
		}
	}
	var x Uint64Pair
	var i uint64
	typedCAS := func(n int) {
		for range n {
			x.CompareAndSwap(i, i, i+1, i+1)
			i++
		}
	}
	var j uint64
	asmCAS := func(n int) {
		for range n {
			asm.CasCX16(p, j, j, j+1, j+1)
			j++
		}
	}
	typedStore := func(n int) {
		for k := range n {
			x.Store(uint64(k), 0)
		}
	}
	typedSwap := func(n int) {
		for k := range n {
			v, _ := x.Swap(uint64(k), 0)
			s += v
		}
	}
	cases := []struct {
		name    string
		need    path128.Path
		a, base func(n int)
	}{
		{"Load-typed-vs-bare/cx16-vmovdqa", path128.CX16VMOVDQA, typedLoad(path128.CX16VMOVDQA), bareVMOVDQA},
		{"Load-typed-vs-asm/cx16-vmovdqa", path128.CX16VMOVDQA, typedLoad(path128.CX16VMOVDQA), asmLoadVMOVDQA},
		{"Load-typed-vs-bare/cx16", path128.CX16, typedLoad(path128.CX16), bareCMPXCHG16B},
		{"Load-typed-vs-asm/cx16", path128.CX16, typedLoad(path128.CX16), asmLoadCX16},
		{"Load-CMPXCHG16B-vs-VMOVDQA/bare", path128.CX16VMOVDQA, bareCMPXCHG16B, bareVMOVDQA},
		{"Load-CMPXCHG16B-vs-VMOVDQA/typed", path128.CX16VMOVDQA, typedLoad(path128.CX16), typedLoad(path128.CX16VMOVDQA)},
		{"CompareAndSwap-typed-vs-bare/cx16", path128.CX16, typedCAS, bareCMPXCHG16B},
		{"CompareAndSwap-typed-vs-asm/cx16", path128.CX16, typedCAS, asmCAS},
		{"Store-typed-vs-bare/cx16", path128.CX16, typedStore, bareCMPXCHG16B},
		{"Swap-typed-vs-bare/cx16", path128.CX16, typedSwap, bareCMPXCHG16B},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			skipUnless(b, c.need)
			usePath(b, c.need)
			paired(b, c.a, c.base)
		})
	}
	sinkA = s
}
