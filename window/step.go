package window

import (
	"fmt"
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

// NewParams validates a limit of units per window and the window length.
// The limit must be in [1, MaxLimit] and the window at least 1ns.
func NewParams(limit int64, window time.Duration) (Params, error) {
	if limit < 1 || limit > MaxLimit {
		return Params{}, fmt.Errorf("window: limit must be in [1, %d], got %d", uint64(MaxLimit), limit)
	}
	if window < 1 {
		return Params{}, fmt.Errorf("window: window must be >= 1ns, got %v", window)
	}
	return Params{r: slide.New(uint64(limit), uint64(window))}, nil
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
// Step is pure: it reads no clock and may run on any copy of a State.
func (p *Params) Step(s State, now, n int64) (State, limit.Result, error) {
	if err := p.check(n); err != nil {
		return s, limit.Result{RetryAfter: limit.Never}, err
	}
	if p.r.L == 0 {
		return s, limit.Result{OK: true}, nil // the zero Params, n == 0
	}
	r, e := p.r.Advance(wide(s), now)
	if n == 0 {
		return s, limit.Result{OK: true, Remaining: p.r.Remaining(r, e)}, nil
	}
	un := uint64(n)
	if !p.r.Fits(r, e, un) {
		return s, limit.Result{Remaining: p.r.Remaining(r, e), RetryAfter: slide.After(r.Start, p.r.Wait(r, un), now)}, nil
	}
	r.Cur += un
	return narrow(r), limit.Result{OK: true, Remaining: p.r.Remaining(r, e)}, nil
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

// admit is Step without the Result, for the hot path; n must be in [1, L].
func (p *Params) admit(s State, now int64, n uint64) (State, bool) {
	r, e := p.r.Advance(wide(s), now)
	if !p.r.Fits(r, e, n) {
		return s, false
	}
	r.Cur += n
	return narrow(r), true
}

// wide and narrow convert between the 32-bit counts stored and the
// arithmetic's; counts never exceed L, so narrow loses nothing.
func wide(s State) slide.State {
	return slide.State{Start: s.Start, Prev: uint64(s.Prev), Cur: uint64(s.Cur)}
}

func narrow(s slide.State) State {
	return State{Start: s.Start, Prev: uint32(s.Prev), Cur: uint32(s.Cur)}
}
