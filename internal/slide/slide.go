// Package slide is the arithmetic of the sliding-window counter shared by
// package window (nanoseconds, 32-bit counts) and package packed64 (coarser
// time units, narrower counts): rotation, the window a stale time counts
// in, the exact admission test, the rounded-up estimate and the wait until a
// request fits.
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

// Advance returns s rotated to the window holding now, the time e in
// [0, W) elapsed in that window, and how far back now is: Start - now if
// now is before s.Start (then s itself and e = 0), else 0.
//
// A stale now in [Start-W, Start) is decided as at Start, where the
// estimate is largest, and its units are counted in Prev, the window that
// holds it; before Start-W, in a window no longer counted, nothing is
// admitted. So each window counts only units at times inside it.
//
// A counter left empty (both counts zero) starts its next window at now,
// which keeps Prev equal to the units admitted in [Start-W, Start): nothing
// was admitted between the old start and now.
func (r *Rule) Advance(s State, now int64) (State, uint64, uint64) {
	e := uint64(now) - uint64(s.Start)
	switch {
	case s.Prev|s.Cur == 0:
	case now < s.Start:
		return s, 0, -e
	case e < r.W:
		return s, e, 0
	case e-r.W < r.W && s.Cur != 0:
		return State{Start: s.Start + int64(r.W), Prev: s.Cur}, e - r.W, 0
	}
	return State{Start: now}, 0, 0
}

// Count adds n units admitted at a time back before Start (0 if not
// stale, as Advance returns it) to the count of the window holding it.
func (s *State) Count(back, n uint64) {
	if back != 0 {
		s.Prev += n
	} else {
		s.Cur += n
	}
}

// Decision is the outcome of Decide.
type Decision struct {
	Next State // the rotated state, with the units counted if OK
	OK   bool
	Left int64 // whole units that fit after the decision
	// If not OK, the units first fit at Base+Off (Off at most 2W) if
	// nothing else is admitted.
	Base int64
	Off  uint64
}

// Decide decides n units in [0, L] at now; n = 0 always fits and leaves
// Next uncounted.
func (r *Rule) Decide(s State, now int64, n uint64) Decision {
	s, e, back := r.Advance(s, now)
	if back > r.W {
		// Nothing fits before the windows still counted; from Start-W on, n
		// fits if it fits at Start.
		d := Decision{Next: s, OK: n == 0, Base: s.Start - int64(r.W)}
		if n != 0 && !r.Fits(s, 0, n) {
			d.Base, d.Off = s.Start, r.Wait(s, n)
		}
		return d
	}
	if n != 0 && !r.Fits(s, e, n) {
		return Decision{Next: s, Left: r.Remaining(s, e), Base: s.Start, Off: r.Wait(s, n)}
	}
	s.Count(back, n)
	return Decision{Next: s, OK: true, Left: r.Remaining(s, e)}
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

// After returns how long after now the offset at from start is, start +
// at - now, or math.MaxInt64 when start + at is past math.MaxInt64 (a time
// int64 cannot hold never comes) or the wait does not fit in int64. Times
// are biased by 2^63, so that int64 order is uint64 order, and the sum's
// carry is checked: start + at - now in 64 bits could wrap to a small wait.
// A start + at before now returns 0 (callers pass offsets past now).
func After(start int64, at uint64, now int64) int64 {
	t, carry := bits.Add64(uint64(start)^1<<63, at, 0)
	u := uint64(now) ^ 1<<63
	switch {
	case carry != 0:
		return math.MaxInt64
	case t < u:
		return 0
	case t-u > math.MaxInt64:
		return math.MaxInt64
	}
	return int64(t - u)
}
