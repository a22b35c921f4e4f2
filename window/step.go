package window

import (
	"math"
	"time"

	"github.com/cellrate/cellrate/internal/slide"
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
	r slide.Rule // L and W in ns
}

// NewParams validates a limit of units per window and the window length. It
// returns a *limit.ParamError for a limit outside [1, MaxLimit] or a window
// below 1ns.
func NewParams(limit int64, window time.Duration) (Params, error) {
	if limit < 1 || limit > MaxLimit {
		return Params{}, paramErr("limit", limit, int64(1), int64(MaxLimit))
	}
	if window < 1 {
		return Params{}, paramErr("window", window, time.Duration(1), nil)
	}
	return Params{r: slide.New(uint64(limit), uint64(window))}, nil
}

func paramErr(param string, value, lo, hi any) error {
	return &limit.ParamError{Pkg: "window", Param: param, Value: value, Min: lo, Max: hi}
}

// Limit returns the units admitted per window.
func (p Params) Limit() int64 { return int64(p.r.L) }

// Window returns the window length.
func (p Params) Window() time.Duration { return time.Duration(p.r.W) }

// Step decides whether n units may be admitted at time now from state s.
// It returns the state to store if the request was admitted (s itself,
// which need not be written, otherwise) and the Result. For n < 0 or n
// above the limit it returns s, a Result with RetryAfter limit.Never, and
// limit.ErrNegativeCost or limit.ErrCostExceedsBurst. n = 0 is always
// admitted, with s unchanged and Remaining as of now.
//
// Step is pure: it reads no clock and may run on any copy of a State. The
// counter's math lives in package slide: an admission is its Advance, Fits
// and Count (take, which AllowAt runs too), the rest its Decide, built from
// the same three.
func (p Params) Step(s State, now, n int64) (State, limit.Result, error) {
	if err := p.check(n); err != nil {
		return s, limit.Result{RetryAfter: limit.Never}, err
	}
	if p.r.L == 0 {
		return s, limit.Result{OK: true}, nil // the zero Params, n == 0
	}
	if n != 0 {
		// The common case, an admission, by the steps AllowAt runs.
		if r, e, ok := p.take(s, now, uint64(n)); ok {
			return narrow(r), limit.Result{OK: true, Remaining: p.r.Remaining(r, e)}, nil
		}
	}
	d := p.r.Decide(wide(s), now, uint64(n))
	switch {
	case !d.OK:
		return s, limit.Result{Remaining: d.Left, RetryAfter: time.Duration(slide.After(d.Base, d.Off, now))}, nil
	case n == 0:
		return s, limit.Result{OK: true, Remaining: d.Left}, nil
	}
	return narrow(d.Next), limit.Result{OK: true, Remaining: d.Left}, nil
}

// Remaining returns the whole units a request at now could take from s.
func (p Params) Remaining(s State, now int64) int64 {
	if p.r.L == 0 {
		return 0
	}
	return p.r.Decide(wide(s), now, 0).Left
}

// undo gives back an admission that moved the state from before to after:
// if s is still after (nothing admitted since, or everything admitted since
// given back), it returns before and true; otherwise s and false (see
// Limiter.Refund for why nothing is given back then).
func (p Params) undo(s, before, after State) (State, bool) {
	if s == after {
		return before, true
	}
	return s, false
}

func (p *Params) check(n int64) error {
	if n < 0 {
		return limit.ErrNegativeCost
	}
	if uint64(n) > p.r.L {
		return limit.ErrCostExceedsBurst
	}
	return nil
}

// take is an admission of n in [1, L] at now: s rotated to now's window
// with the n units counted, the time e elapsed in that window, and true; or
// false if they do not fit.
func (p *Params) take(s State, now int64, n uint64) (slide.State, uint64, bool) {
	r, e, back := p.r.Advance(wide(s), now)
	if back > p.r.W || !p.r.Fits(r, e, n) {
		return r, e, false
	}
	r.Count(back, n)
	return r, e, true
}

// wide and narrow convert between the 32-bit counts stored and the
// arithmetic's; counts never exceed L, so narrow loses nothing.
func wide(s State) slide.State {
	return slide.State{Start: s.Start, Prev: uint64(s.Prev), Cur: uint64(s.Cur)}
}

func narrow(s slide.State) State {
	return State{Start: s.Start, Prev: uint32(s.Prev), Cur: uint32(s.Cur)}
}
