// Package window is a sliding-window counter: "at most Limit units in any
// window of length W", without keeping a log, in one 128-bit cell. Use it for
// limits stated per window (say 1000 requests a minute); for exactly at most
// L in every window use package slidelog, for a steady rate with bursts
// package gcra. See ExampleLimiter.
//
// It counts the units admitted in the current fixed window (Cur) and in the
// one before it (Prev), and estimates those in the trailing window as
//
//	Prev*(W-e)/W + Cur
//
// with e the time into the current window; n units are admitted when the
// estimate plus n is at most Limit. The test is exact integer arithmetic, so
// no rounding admits a unit the formula does not allow. A denial writes
// nothing. Time is int64 nanoseconds on a fixed-origin clock (package
// nanotime): each method has an ...At twin taking now; the plain form reads
// the Limiter's clock, nanotime.Now unless WithClock gave another.
//
// # Contract
//
// Each fixed window counts at most Limit units, all admitted at caller times
// inside it. So, on any schedule (concurrent callers, times stale, repeated
// or out of order, anywhere in the int64 range), at most
// Limit*(ceil(T/W)+1) units are admitted at caller times in any closed
// interval of length T: at most 2*Limit in any interval of length W. On a
// schedule whose times never go backwards, an interval of length W ending at
// fraction f of its window holds at most Limit + floor(p*f) units (p the
// previous window's count), where an exact sliding log holds Limit.
//
// A stale now never creates capacity: one in the previous window is decided
// as at the current window's start and counted there; an earlier one is
// denied. A request that could first fit past math.MaxInt64, or after a wait
// longer than math.MaxInt64 ns, gets RetryAfter limit.Never.
//
// Limits are 1 to 2^32-1 and windows 1ns to about 292 years. There is no
// Reserve or Wait (the two counts have no time to charge a reservation at:
// sleep RetryAfter and ask again) and no SetRate (counts under one window
// length mean nothing under another). Step, Pack and Unpack let the same
// counter live in another store.
//
// The proofs of these bounds and measured errors against an exact log are
// in the project's ARCHITECTURE.md.
package window

import (
	"time"

	"golang.org/x/sys/cpu"

	"github.com/cellrate/cellrate/atomic128"
	"github.com/cellrate/cellrate/internal/backoff"
	"github.com/cellrate/cellrate/internal/cell"
	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/nanotime"
)

// Limiter is a sliding-window counter safe for concurrent use.
//
// The zero Limiter has limit 0 and admits nothing; use New. A Limiter must
// not be copied after first use.
type Limiter struct {
	p     Params
	clock nanotime.Clock   // nil for nanotime.Now
	_     cpu.CacheLinePad // cell's line holds nothing the reads of p would miss on
	cell  atomic128.Uint64Pair
	_     cpu.CacheLinePad
}

var _ limit.Member = (*Limiter)(nil)

// Option configures a Limiter.
type Option func(*config)

type config struct {
	clock    nanotime.Clock
	setClock bool
}

// WithClock makes the plain (non-At) methods read clock instead of
// nanotime.Now: for example nanotime.Since(), which follows testing/synctest's
// fake time. A nil clock is a *limit.ParamError (Param "clock") from New.
func WithClock(clock nanotime.Clock) Option {
	return func(c *config) { c.clock, c.setClock = clock, true }
}

// New returns a Limiter admitting at most limit units in any window of the
// given length (up to the approximation bound in the package doc). It
// returns NewParams' *limit.ParamError for a limit outside [1, MaxLimit] or
// a window below 1ns.
func New(limit int64, window time.Duration, opts ...Option) (*Limiter, error) {
	p, err := NewParams(limit, window)
	if err != nil {
		return nil, err
	}
	return NewFromParams(p, opts...)
}

// NewFromParams returns an empty Limiter with Params p, which must come
// from NewParams (the zero Params is a *limit.ParamError).
func NewFromParams(p Params, opts ...Option) (*Limiter, error) {
	if p.r.L == 0 {
		return nil, paramErr("params", p, nil, nil)
	}
	var c config
	for i, o := range opts {
		if o == nil {
			return nil, &limit.ParamError{Pkg: "window", Param: "option", Value: i, Reason: "a nil Option"}
		}
		o(&c)
	}
	if c.setClock && c.clock == nil {
		return nil, paramErr("clock", nil, nil, nil)
	}
	return &Limiter{p: p, clock: c.clock}, nil
}

// now reads the Limiter's clock.
func (l *Limiter) now() int64 {
	if l.clock != nil {
		return l.clock()
	}
	return nanotime.Now()
}

// Params returns the limiter's limit and window.
func (l *Limiter) Params() Params { return l.p }

// State returns the limiter's state now, for running the steps elsewhere.
func (l *Limiter) State() State { return Unpack(l.cell.Load()) }

// Allow is AllowAt with the Limiter's clock.
func (l *Limiter) Allow() bool { return l.AllowAt(l.now()) }

// AllowAt reports whether one unit may be admitted at time now, and admits
// it if so.
func (l *Limiter) AllowAt(now int64) bool {
	// AllowAt, AllowNAt and TakeAt are hand loops, not cell.Run128: the
	// runner's indirect call to the step cost them more than 5% (the package
	// benchmarks, before and after, in one run). They run the same pure
	// steps.
	if l.p.r.L == 0 {
		return false
	}
	var spin backoff.Spin
	for ; ; spin.Wait() {
		v1, v2 := l.cell.Load()
		next, _, ok := l.p.take(Unpack(v1, v2), now, 1)
		if !ok {
			return false
		}
		w1, w2 := Pack(narrow(next))
		if l.cell.CompareAndSwap(v1, v2, w1, w2) {
			return true
		}
	}
}

// AllowN is AllowNAt with the Limiter's clock.
func (l *Limiter) AllowN(n int64) (limit.Result, error) { return l.AllowNAt(l.now(), n) }

// AllowNAt admits n units at time now if all n fit. It returns
// limit.ErrNegativeCost for n < 0 and limit.ErrCostExceedsBurst for n above
// the limit. n = 0 is always admitted and writes nothing.
func (l *Limiter) AllowNAt(now, n int64) (limit.Result, error) {
	var spin backoff.Spin
	for ; ; spin.Wait() {
		v1, v2 := l.cell.Load()
		s := Unpack(v1, v2)
		next, r, err := l.p.Step(s, now, n)
		if !r.OK || next == s {
			return r, err
		}
		w1, w2 := Pack(next)
		if l.cell.CompareAndSwap(v1, v2, w1, w2) {
			return r, nil
		}
	}
}

// TakeAt is AllowNAt that also returns, when it admits n > 0, the Receipt
// Refund needs to give the units back (limit.Member).
func (l *Limiter) TakeAt(now, n int64) (limit.Result, limit.Receipt, error) {
	var spin backoff.Spin
	for ; ; spin.Wait() {
		v1, v2 := l.cell.Load()
		s := Unpack(v1, v2)
		next, r, err := l.p.Step(s, now, n)
		if !r.OK || next == s {
			return r, limit.Receipt{}, err
		}
		w1, w2 := Pack(next)
		if l.cell.CompareAndSwap(v1, v2, w1, w2) {
			return r, limit.Receipt{At: now, N: n, Before: [2]uint64{v1, v2}, After: [2]uint64{w1, w2}}, nil
		}
	}
}

// Refund gives back the units of the admission that returned rc (see
// limit.Member), exactly when the state is still the one that admission
// stored: when nothing was admitted since, or all admitted since were given
// back. Otherwise it gives back nothing. Taking the units out of their
// window's count would be exact for the bound while that window is still
// counted, but a state cannot tell that window from a later one with the
// same start (a counter emptied by refunds starts its next window at any
// now), and taking units out of a window that does not hold them could pass
// the bound. limit.All refunds at once, so that is rare; put a Limiter that
// many callers share last in an All, where it is never refunded.
func (l *Limiter) Refund(rc limit.Receipt) {
	if rc.N == 0 {
		return
	}
	before, after := Unpack(rc.Before[0], rc.Before[1]), Unpack(rc.After[0], rc.After[1])
	cell.Run128(&l.cell, func(v1, v2 uint64) (uint64, uint64, struct{}, bool) {
		next, ok := l.p.undo(Unpack(v1, v2), before, after)
		w1, w2 := Pack(next)
		return w1, w2, struct{}{}, ok
	})
}

// Remaining is RemainingAt with the Limiter's clock.
func (l *Limiter) Remaining() int64 { return l.RemainingAt(l.now()) }

// RemainingAt returns the whole units a request at now could take.
func (l *Limiter) RemainingAt(now int64) int64 { return l.p.Remaining(l.State(), now) }

// Estimate is EstimateAt with the Limiter's clock.
func (l *Limiter) Estimate() float64 { return l.EstimateAt(l.now()) }

// EstimateAt returns the estimated units admitted in the window ending at
// now, Prev*(W-e)/W + Cur: the count the next decision compares with the
// limit. It is for reading; decisions never use floating point.
func (l *Limiter) EstimateAt(now int64) float64 {
	if l.p.r.L == 0 {
		return 0
	}
	s, e, _ := l.p.r.Advance(wide(Unpack(l.cell.Load())), now)
	return l.p.r.Estimate(s, e)
}
