package window

import (
	"fmt"
	"math"
	"math/bits"
	"time"

	"github.com/cellrate/cellrate/limit"
)

// MaxLimit is the largest limit a window holds: its counts are 32 bits wide.
const MaxLimit = math.MaxUint32

// State is the counter's state: the start of the current window and the
// units admitted in it and in the window before it.
//
// The zero State is an empty counter; it is the state of a new Limiter.
type State struct {
	// Start is when the current window began, in nanoseconds.
	Start int64
	// Prev counts the units admitted in [Start-window, Start).
	Prev uint32
	// Cur counts the units admitted from Start on.
	Cur uint32
}

// Pack returns s as the two words a 128-bit cell holds: the start, and the
// previous count above the current count.
func Pack(s State) (start, counts uint64) {
	return uint64(s.Start), uint64(s.Prev)<<32 | uint64(s.Cur)
}

// Unpack is the inverse of Pack.
func Unpack(start, counts uint64) State {
	return State{Start: int64(start), Prev: uint32(counts >> 32), Cur: uint32(counts)}
}

// Params is a validated limit and window length. The zero Params has limit
// 0: it admits nothing.
type Params struct {
	limit  uint64 // L, at most MaxLimit
	window uint64 // W in ns, in [1, MaxInt64]
	// lwHi:lwLo is L*W, the right-hand side of the admission test.
	lwHi, lwLo uint64
}

// NewParams validates a limit of units per window and the window length.
// The limit must be in [1, MaxLimit] and the window at least 1ns.
func NewParams(limit int64, window time.Duration) (Params, error) {
	if limit < 1 || limit > MaxLimit {
		return Params{}, fmt.Errorf("window: limit must be in [1, %d], got %d", uint64(MaxLimit), limit)
	}
	if window < 1 {
		return Params{}, fmt.Errorf("window: window must be >= 1ns, got %v", window)
	}
	p := Params{limit: uint64(limit), window: uint64(window)}
	p.lwHi, p.lwLo = bits.Mul64(p.limit, p.window)
	return p, nil
}

// Limit returns the units admitted per window.
func (p Params) Limit() int64 { return int64(p.limit) }

// Window returns the window length.
func (p Params) Window() time.Duration { return time.Duration(p.window) }

// Step decides whether n units may be admitted at time now from state s.
// It returns the state to store if the request was admitted (s itself,
// which need not be written, otherwise) and the Result. For n < 0 or n
// above the limit it returns s, a Result with RetryAfter limit.Never, and
// limit.ErrNegativeCost or limit.ErrCostExceedsBurst.
//
// Step is pure: it reads no clock and may run on any copy of a State.
func (p Params) Step(s State, now, n int64) (State, limit.Result, error) {
	if err := p.check(n); err != nil {
		return s, limit.Result{RetryAfter: limit.Never}, err
	}
	if p.limit == 0 {
		return s, limit.Result{OK: true}, nil // the zero Params, n == 0
	}
	r, e := p.advance(s, now)
	un := uint64(n)
	if !p.fits(r, e, un) {
		return s, limit.Result{Remaining: p.remaining(r, e), RetryAfter: p.wait(r, e, un, now)}, nil
	}
	if n == 0 {
		return s, limit.Result{OK: true, Remaining: p.remaining(r, e)}, nil
	}
	r.Cur += uint32(n)
	return r, limit.Result{OK: true, Remaining: p.remaining(r, e)}, nil
}

func (p *Params) check(n int64) error {
	if n < 0 {
		return limit.ErrNegativeCost
	}
	if uint64(n) > p.limit {
		return limit.ErrCostExceedsBurst
	}
	return nil
}

// admit is Step without the Result, for the hot path; n must be in [1, L].
func (p *Params) admit(s State, now int64, n uint64) (State, bool) {
	r, e := p.advance(s, now)
	if !p.fits(r, e, n) {
		return s, false
	}
	r.Cur += uint32(n)
	return r, true
}

// advance returns s rotated to the window holding now and the time e in
// [0, W) elapsed in that window.
//
// A time before s.Start is taken as s.Start, where the previous window
// weighs the most: time going backwards never creates capacity. A counter
// left empty (both counts zero) starts its next window at now, which keeps
// Prev equal to the units admitted in [Start-W, Start): nothing was
// admitted between the old start and now.
func (p *Params) advance(s State, now int64) (State, uint64) {
	if s.Prev|s.Cur == 0 {
		return State{Start: now}, 0
	}
	if now <= s.Start {
		return s, 0
	}
	e := uint64(now) - uint64(s.Start)
	if e < p.window {
		return s, e
	}
	if e-p.window < p.window && s.Cur != 0 {
		return State{Start: s.Start + int64(p.window), Prev: s.Cur}, e - p.window
	}
	return State{Start: now}, 0
}

// fits reports whether Prev*(W-e)/W + Cur + n <= L, exactly: it compares
// Prev*(W-e) + (Cur+n)*W with L*W in 128 bits, so no rounding can admit a
// unit the estimate does not allow.
func (p *Params) fits(s State, e, n uint64) bool {
	if uint64(s.Prev)+uint64(s.Cur)+n <= p.limit {
		return true // the estimate never exceeds Prev + Cur
	}
	if uint64(s.Cur)+n > p.limit {
		return false
	}
	h1, l1 := bits.Mul64(uint64(s.Prev), p.window-e)
	h2, l2 := bits.Mul64(uint64(s.Cur)+n, p.window)
	lo, c := bits.Add64(l1, l2, 0)
	hi := h1 + h2 + c
	return hi < p.lwHi || hi == p.lwHi && lo <= p.lwLo
}

// weight returns ceil(Prev*(W-e)/W), the previous window's share of the
// estimate rounded up.
func (p *Params) weight(s State, e uint64) uint64 {
	hi, lo := bits.Mul64(uint64(s.Prev), p.window-e)
	q, rem := bits.Div64(hi, lo, p.window) // hi < W: the product is below 2^32*W
	if rem != 0 {
		q++
	}
	return q
}

// remaining returns the whole units that would fit now: L minus the
// estimate, rounded down, and never negative.
func (p *Params) remaining(s State, e uint64) int64 {
	used := p.weight(s, e) + uint64(s.Cur)
	if used >= p.limit {
		return 0
	}
	return int64(p.limit - used)
}

// wait returns how long after now n units first fit if nothing else is
// admitted, given that they do not fit in s at elapsed time e.
func (p *Params) wait(s State, e, n uint64, now int64) int64 {
	var at uint64 // offset from s.Start at which n fits
	if c := uint64(s.Cur) + n; c <= p.limit {
		// Within this window: the least x with Prev*(W-x) <= (L-Cur-n)*W.
		// Not fitting means the quotient is below W-e, so Div64 cannot overflow.
		hi, lo := bits.Mul64(p.limit-c, p.window)
		q, _ := bits.Div64(hi, lo, uint64(s.Prev))
		at = p.window - q
	} else {
		// In the next window Cur becomes Prev: the least x with
		// Cur*(W-x) <= (L-n)*W. Two windows on, n <= L always fits.
		at = p.window
		if free := p.limit - n; free < uint64(s.Cur) {
			hi, lo := bits.Mul64(free, p.window)
			q, _ := bits.Div64(hi, lo, uint64(s.Cur))
			at += p.window - q
		}
	}
	// s.Start+at is at most s.Start+2W; compute the distance from now in
	// uint64 so that no intermediate sum overflows int64.
	d := uint64(s.Start) - uint64(now) + at
	if int64(d) < 0 {
		return limit.Never
	}
	return int64(d)
}

// estimate returns Prev*(W-e)/W + Cur as a float, for reading only.
func (p *Params) estimate(s State, e uint64) float64 {
	return float64(s.Prev)*(float64(p.window-e)/float64(p.window)) + float64(s.Cur)
}
