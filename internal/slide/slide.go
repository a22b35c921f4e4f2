// Package slide is the arithmetic of the sliding-window counter shared by
// package window (nanoseconds, 32-bit counts) and package packed64 (coarser
// time units, narrower counts): rotation, the exact admission test, the
// rounded-up estimate and the wait until a request fits.
//
// Times are int64 in the caller's unit; the window W is at least 1 unit and
// counts are below 2^32, so every product fits in 128 bits.
package slide

import (
	"math"
	"math/bits"
)

// Rule is a limit L per window of W time units.
type Rule struct {
	L, W       uint64
	lwHi, lwLo uint64 // L*W
}

// New returns the rule for l units per window of w time units.
func New(l, w uint64) Rule {
	r := Rule{L: l, W: w}
	r.lwHi, r.lwLo = bits.Mul64(l, w)
	return r
}

// State is a window start and the units counted in the window before it
// and from it on.
type State struct {
	Start     int64
	Prev, Cur uint64
}

// Advance returns s rotated to the window holding now and the time e in
// [0, W) elapsed in that window.
//
// A time before s.Start is taken as s.Start, where the previous window
// weighs the most: time going backwards never creates capacity. A counter
// left empty (both counts zero) starts its next window at now, which keeps
// Prev equal to the units admitted in [Start-W, Start): nothing was admitted
// between the old start and now.
func (r *Rule) Advance(s State, now int64) (State, uint64) {
	if s.Prev|s.Cur == 0 {
		return State{Start: now}, 0
	}
	if now <= s.Start {
		return s, 0
	}
	e := uint64(now) - uint64(s.Start)
	if e < r.W {
		return s, e
	}
	if e-r.W < r.W && s.Cur != 0 {
		return State{Start: s.Start + int64(r.W), Prev: s.Cur}, e - r.W
	}
	return State{Start: now}, 0
}

// Fits reports whether Prev*(W-e)/W + Cur + n <= L, exactly: it compares
// Prev*(W-e) + (Cur+n)*W with L*W in 128 bits, so no rounding can admit a
// unit the estimate does not allow. n must be at most L.
func (r *Rule) Fits(s State, e, n uint64) bool {
	// The estimate never exceeds Prev + Cur: this test, inlined, settles
	// most decisions of a counter below its limit.
	return s.Prev+s.Cur+n <= r.L || r.fitsExact(s, e, n)
}

// fitsExact is kept out of line so that Fits inlines.
//
//go:noinline
func (r *Rule) fitsExact(s State, e, n uint64) bool {
	if s.Cur+n > r.L {
		return false
	}
	h1, l1 := bits.Mul64(s.Prev, r.W-e)
	h2, l2 := bits.Mul64(s.Cur+n, r.W)
	lo, c := bits.Add64(l1, l2, 0)
	hi := h1 + h2 + c
	return hi < r.lwHi || hi == r.lwHi && lo <= r.lwLo
}

// Remaining returns the whole units that fit now: L minus the estimate,
// rounded down, and never negative.
func (r *Rule) Remaining(s State, e uint64) int64 {
	w := s.Prev // the previous window's share, rounded up
	if w != 0 && e != 0 {
		hi, lo := bits.Mul64(s.Prev, r.W-e)
		var rem uint64
		w, rem = bits.Div64(hi, lo, r.W) // hi < W: the product is below 2^32*W
		if rem != 0 {
			w++
		}
	}
	if used := w + s.Cur; used < r.L {
		return int64(r.L - used)
	}
	return 0
}

// Wait returns the offset from s.Start at which n units first fit if
// nothing else is admitted, given that they do not fit at e. It is in
// (e, 2W].
func (r *Rule) Wait(s State, n uint64) uint64 {
	if c := s.Cur + n; c <= r.L {
		// Within this window: the least x with Prev*(W-x) <= (L-Cur-n)*W.
		// Not fitting means the quotient is below W-e, so Div64 cannot overflow.
		hi, lo := bits.Mul64(r.L-c, r.W)
		q, _ := bits.Div64(hi, lo, s.Prev)
		return r.W - q
	}
	// In the next window Cur becomes Prev: the least x with
	// Cur*(W-x) <= (L-n)*W. Two windows on, n <= L always fits.
	if free := r.L - n; free < s.Cur {
		hi, lo := bits.Mul64(free, r.W)
		q, _ := bits.Div64(hi, lo, s.Cur)
		return 2*r.W - q
	}
	return r.W
}

// Estimate returns Prev*(W-e)/W + Cur as a float, for reading only.
func (r *Rule) Estimate(s State, e uint64) float64 {
	return float64(s.Prev)*(float64(r.W-e)/float64(r.W)) + float64(s.Cur)
}

// After returns how long after now the offset at from start is, saturated
// at math.MaxInt64; the subtraction is done in uint64 so that no
// intermediate sum overflows.
func After(start int64, at uint64, now int64) int64 {
	d := uint64(start) - uint64(now) + at
	if int64(d) < 0 {
		return math.MaxInt64
	}
	return int64(d)
}
