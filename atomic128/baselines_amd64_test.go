//go:build gc && !purego && amd64

package atomic128

import (
	"github.com/cellrate/cellrate/internal/asm128"
	floors128 "github.com/cellrate/cellrate/internal/floor"
	"github.com/cellrate/cellrate/internal/path128"
)

var bareVMOVDQA = floor{"bare/VMOVDQA", path128.CX16VMOVDQA, func(p *[2]uint64, n int) {
	for range n {
		floors128.BareVMOVDQA(p)
	}
}}

var bareCMPXCHG16B = floor{"bare/CMPXCHG16B", path128.CX16, func(p *[2]uint64, n int) {
	for range n {
		floors128.BareCMPXCHG16B(p)
	}
}}

// floors are, per operation, the bare instruction (bare/) and the raw
// routine the typed API dispatches to (internal/asm128).
var floors = map[string][]floor{
	"Load": {
		bareVMOVDQA,
		bareCMPXCHG16B,
		{"asm/LoadVMOVDQA", path128.CX16VMOVDQA, func(p *[2]uint64, n int) {
			var s uint64
			for range n {
				v, _ := asm128.LoadVMOVDQA(p)
				s += v
			}
			sinkA = s
		}},
		{"asm/LoadCX16", path128.CX16, func(p *[2]uint64, n int) {
			var s uint64
			for range n {
				v, _ := asm128.LoadCX16(p)
				s += v
			}
			sinkA = s
		}},
	},
	"Store": {bareCMPXCHG16B, {"asm/StoreCX16", path128.CX16, func(p *[2]uint64, n int) {
		for i := range uint64(n) {
			asm128.StoreCX16(p, i, i)
		}
	}}},
	"Swap": {bareCMPXCHG16B, {"asm/SwapCX16", path128.CX16, func(p *[2]uint64, n int) {
		var s uint64
		for i := range uint64(n) {
			v, _ := asm128.SwapCX16(p, i, i)
			s += v
		}
		sinkA = s
	}}},
	"CompareAndSwap": {bareCMPXCHG16B, {"asm/CasCX16", path128.CX16, func(p *[2]uint64, n int) {
		a, b := p[0], p[1]
		for range n {
			asm128.CasCX16(p, a, b, a+1, b)
			a++
		}
	}}},
}

// ratios are BenchmarkRatio's cases: the typed API against the bare
// instruction and against the raw routine, and the CMPXCHG16B load against
// the VMOVDQA load.
func ratios() []ratio {
	cx16, vec := path128.CX16, path128.CX16VMOVDQA
	return []ratio{
		{"Load-typed-vs-bare/cx16-vmovdqa", vec, typed("Load", vec), raw("Load", "bare/VMOVDQA")},
		{"Load-typed-vs-asm/cx16-vmovdqa", vec, typed("Load", vec), raw("Load", "asm/LoadVMOVDQA")},
		{"Load-typed-vs-bare/cx16", cx16, typed("Load", cx16), raw("Load", "bare/CMPXCHG16B")},
		{"Load-typed-vs-asm/cx16", cx16, typed("Load", cx16), raw("Load", "asm/LoadCX16")},
		{"Load-CMPXCHG16B-vs-VMOVDQA/bare", vec, raw("Load", "bare/CMPXCHG16B"), raw("Load", "bare/VMOVDQA")},
		{"Load-CMPXCHG16B-vs-VMOVDQA/typed", vec, typed("Load", cx16), typed("Load", vec)},
		{"CompareAndSwap-typed-vs-bare/cx16", cx16, typed("CompareAndSwap", cx16), raw("CompareAndSwap", "bare/CMPXCHG16B")},
		{"CompareAndSwap-typed-vs-asm/cx16", cx16, typed("CompareAndSwap", cx16), raw("CompareAndSwap", "asm/CasCX16")},
		{"Store-typed-vs-bare/cx16", cx16, typed("Store", cx16), raw("Store", "bare/CMPXCHG16B")},
		{"Store-typed-vs-asm/cx16", cx16, typed("Store", cx16), raw("Store", "asm/StoreCX16")},
		{"Swap-typed-vs-bare/cx16", cx16, typed("Swap", cx16), raw("Swap", "bare/CMPXCHG16B")},
		{"Swap-typed-vs-asm/cx16", cx16, typed("Swap", cx16), raw("Swap", "asm/SwapCX16")},
	}
}
