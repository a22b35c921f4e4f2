package redis

import (
	"math/bits"
	"time"

	"github.com/cellrate/cellrate/internal/intmath"
)

// maxSmall bounds the numbers the scripts multiply: a GCRA's step ratio p
// and its burst in steps, a window's length in ns. Below it every value
// the scripts hold stays under 2^53 (see lua/prelude.lua).
const maxSmall = 1<<48 - 1

// maxWindow is the longest window, in ns: 2^50-1 (about 13 days).
const maxWindow = 1<<50 - 1

// gcraParams is step.GCRA (package gcra's parameters) in the integers the script takes.
type gcraParams struct {
	p, e, j uint64 // a step is p/e ns, an event j steps
	burst   uint64
	c1, c2  uint64 // 1e9 mod p and 2^63 mod p
}

// newGCRAParams reduces events per period as step.NewGCRA does, and
// refuses what the script cannot hold exactly.
func newGCRAParams(events int64, period time.Duration, burst int64) (gcraParams, error) {
	switch {
	case events < 1:
		return gcraParams{}, paramError("events", events, int64(1), nil, "")
	case period < 1:
		return gcraParams{}, paramError("period", period, time.Duration(1), nil, "")
	case burst < 1:
		return gcraParams{}, paramError("burst", burst, int64(1), nil, "")
	}
	per, ev := uint64(period), uint64(events)
	g := intmath.GCD(per, ev)
	per, ev = per/g, ev/g
	if per < ev {
		return gcraParams{}, paramError("events", events, int64(1), nil,
			"the rate exceeds one event per nanosecond")
	}
	j := per / ev
	p, e := per, ev*j
	g = intmath.GCD(p, e)
	p, e = p/g, e/g
	if p > maxSmall {
		return gcraParams{}, paramError("period", period, nil, nil,
			"period/events is not a whole number of ns and its reduced ratio needs more than 48 bits")
	}
	if hi, lo := bits.Mul64(uint64(burst), j); hi != 0 || lo > maxSmall {
		return gcraParams{}, paramError("burst", burst, int64(1), int64(maxSmall/j),
			"burst times the emission interval must stay below 2^48 steps (3.2 days)")
	}
	return gcraParams{p: p, e: e, j: j, burst: uint64(burst), c1: 1e9 % p, c2: (1 << 63) % p}, nil
}

// gcraTAT maps a key's origin (Unix seconds and ns) and its TAT in steps
// from it to the TAT of package gcra: (origin + 2^63)*e/p + t. It reports
// false if the origin is not a step grid point or the TAT does not fit.
func (ps gcraParams) gcraTAT(os, ons, t int64) (uint64, bool) {
	u := uint64(os)*1e9 + uint64(ons) + 1<<63
	if u%ps.p != 0 {
		return 0, false
	}
	hi, g := bits.Mul64(u/ps.p, ps.e)
	tat := g + uint64(t)
	if hi != 0 || (t >= 0 && tat < g) || (t < 0 && tat > g) {
		return 0, false
	}
	return tat, true
}
