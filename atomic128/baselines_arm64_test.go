//go:build gc && !purego && arm64

package atomic128

import (
	"github.com/cellrate/cellrate/internal/asm128"
	floors128 "github.com/cellrate/cellrate/internal/floor"
	"github.com/cellrate/cellrate/internal/path128"
)

var bareCASPAL = floor{"bare/CASPAL", path128.CASP, func(p *[2]uint64, n int) {
	for range n {
		floors128.BareCASPAL(p)
	}
}}

var bareLDAXPSTLXP = floor{"bare/LDAXPSTLXP", path128.LLSC, func(p *[2]uint64, n int) {
	for range n {
		floors128.BareLDAXPSTLXP(p)
	}
}}

// floors are, per operation, the bare instructions (bare/) and the raw
// routines the typed API dispatches to (internal/asm128).
var floors = map[string][]floor{
	"Load": {bareCASPAL, bareLDAXPSTLXP,
		{"asm/LoadCASP", path128.CASP, func(p *[2]uint64, n int) {
			var s uint64
			for range n {
				v, _ := asm128.LoadCASP(p)
				s += v
			}
			sinkA = s
		}},
		{"asm/LoadLLSC", path128.LLSC, func(p *[2]uint64, n int) {
			var s uint64
			for range n {
				v, _ := asm128.LoadLLSC(p)
				s += v
			}
			sinkA = s
		}},
	},
	"Store": {bareCASPAL, bareLDAXPSTLXP,
		{"asm/StoreCASP", path128.CASP, func(p *[2]uint64, n int) {
			for i := range uint64(n) {
				asm128.StoreCASP(p, i, i)
			}
		}},
		{"asm/StoreLLSC", path128.LLSC, func(p *[2]uint64, n int) {
			for i := range uint64(n) {
				asm128.StoreLLSC(p, i, i)
			}
		}},
	},
	"Swap": {bareCASPAL, bareLDAXPSTLXP,
		{"asm/SwapCASP", path128.CASP, func(p *[2]uint64, n int) {
			var s uint64
			for i := range uint64(n) {
				v, _ := asm128.SwapCASP(p, i, i)
				s += v
			}
			sinkA = s
		}},
		{"asm/SwapLLSC", path128.LLSC, func(p *[2]uint64, n int) {
			var s uint64
			for i := range uint64(n) {
				v, _ := asm128.SwapLLSC(p, i, i)
				s += v
			}
			sinkA = s
		}},
	},
	"CompareAndSwap": {bareCASPAL, bareLDAXPSTLXP,
		{"asm/CasCASP", path128.CASP, func(p *[2]uint64, n int) {
			a, b := p[0], p[1]
			for range n {
				asm128.CasCASP(p, a, b, a+1, b)
				a++
			}
		}},
		{"asm/CasLLSC", path128.LLSC, func(p *[2]uint64, n int) {
			a, b := p[0], p[1]
			for range n {
				asm128.CasLLSC(p, a, b, a+1, b)
				a++
			}
		}},
	},
}

// ratios are BenchmarkRatio's cases: the typed API against the bare
// instructions and against the raw routines (under qemu, a smoke test).
func ratios() []ratio {
	casp, llsc := path128.CASP, path128.LLSC
	return []ratio{
		{"Load-typed-vs-bare/casp", casp, typed("Load", casp), raw("Load", "bare/CASPAL")},
		{"Load-typed-vs-asm/casp", casp, typed("Load", casp), raw("Load", "asm/LoadCASP")},
		{"Load-typed-vs-bare/llsc", llsc, typed("Load", llsc), raw("Load", "bare/LDAXPSTLXP")},
		{"Load-typed-vs-asm/llsc", llsc, typed("Load", llsc), raw("Load", "asm/LoadLLSC")},
		{"CompareAndSwap-typed-vs-bare/casp", casp, typed("CompareAndSwap", casp), raw("CompareAndSwap", "bare/CASPAL")},
		{"CompareAndSwap-typed-vs-asm/casp", casp, typed("CompareAndSwap", casp), raw("CompareAndSwap", "asm/CasCASP")},
		{"CompareAndSwap-typed-vs-bare/llsc", llsc, typed("CompareAndSwap", llsc), raw("CompareAndSwap", "bare/LDAXPSTLXP")},
		{"CompareAndSwap-typed-vs-asm/llsc", llsc, typed("CompareAndSwap", llsc), raw("CompareAndSwap", "asm/CasLLSC")},
	}
}
