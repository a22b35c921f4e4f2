// Package window is a sliding-window counter: at most Limit units in any
// window of length W, estimated from two fixed windows held in one 128-bit
// cell.
//
// # The estimate
//
// The state is the start of the current window and the units admitted in it
// (Cur) and in the window before it (Prev). At time now, e = now - Start into
// the current window, the units admitted in the trailing window (now-W, now]
// are estimated as
//
//	Prev*(W-e)/W + Cur
//
// and n units are admitted when the estimate plus n is at most Limit. The test
// is exact: it compares Prev*(W-e) + (Cur+n)*W with Limit*W in 128-bit
// integers, so no rounding ever admits a unit the formula does not allow.
// The window rotates by one when now reaches Start+W; after a gap of two
// windows, or once both counts are zero, the next window starts at the next
// admission. Windows may be from 1ns to about 292 years; all arithmetic is
// exact over that range.
//
// # Time going backwards
//
// A stale now, before Start, never creates capacity. In [Start-W, Start) it
// is decided as at Start, where the estimate is largest (Prev + Cur + n <=
// Limit), and its units are counted in Prev, the window that holds that
// time. Before Start-W, in a window no longer counted, nothing is admitted
// (RetryAfter is the time until Start-W, or until the request fits after
// Start if it does not fit at Start), as package gcra denies a now too far
// before its arrival time. So every fixed window counts only units admitted
// at caller times inside it, and at most Limit (at most 2^32-1) of them:
// counts cannot wrap.
//
// # Error against an exact sliding log
//
// The estimate assumes the previous window's units were spread evenly. If p
// units were admitted in the previous window and the fraction f = e/W of the
// current window has passed, the true count in (now-W, now] lies between
// Cur and Cur+p, so the estimate is off by at most p*max(f, 1-f). Hence, in
// any interval of length W ending at a time at fraction f of its window (on a
// schedule whose times never go backwards), at
// most Limit + floor(p*f) <= 2*Limit - 1 units are admitted, where an exact
// sliding log admits Limit. The bound is reached when the previous window's
// units all came at its very end (TestLogBoundTight reaches 2*Limit-2).
// Measured over 200,000 requests per schedule (TestLogError, Limit 100 per
// second): Poisson arrivals at 0.5x, 1.2x and 4x the limit gave a worst
// trailing-window count of 0.86, 1.14 and 1.02 times Limit, and random bursts
// of 1 to 5 units 1.92 times Limit; in total the counter admitted between
// 0.946 and 1.008 times what an exact sliding log admitted from the same
// requests.
//
// On any schedule, with times stale, repeated or out of order, a bound
// holds over the times callers pass: at most Limit*(ceil(T/W)+1) <=
// 2*Limit + Limit*T/W units at caller times in any closed interval of
// length T, so at most 2*Limit in any interval of length W. (Before the
// rule above, one stale time in each of k later windows let
// Limit + k*(Limit-1) units in at times nanoseconds apart.)
//
// Proof: call the interval a count covers its window: [Start, Start+W) for
// Cur, [Start-W, Start) for Prev. A unit admitted at now is counted in the
// window holding now (Cur for now in [Start, Start+W), Prev for a stale now
// in [Start-W, Start), none earlier). Rotating by one keeps each count with
// its window. A reset to Start = now happens at now >= old Start + 2W, or
// with the old Cur zero, or with both counts zero; the new Prev, zero, then
// covers [now-W, now), where nothing was admitted. So each window's count is
// exactly the units admitted at caller times inside it, and the windows
// holding units are disjoint (each new Start is at or after the end of the
// last window with units). Each count is at most Limit: an admission in Cur
// needs Cur + n <= Limit, one in Prev needs Prev + Cur + n <= Limit. A
// closed interval of length T meets at most ceil(T/W)+1 disjoint windows of
// length W. QED.
// TestBoundStaleTimes checks 2*Limit + Limit*T/W exactly over every
// interval of schedules with stale, repeated and out-of-order times,
// through Step and through a Limiter; the most it met in any (t-W, t] was
// 1.6 times Limit (2*Limit is a bound, not shown to be reached).
//
// # Concurrency
//
// A Limiter runs Params.Step on an atomic128.Uint64Pair: one load, the step,
// one 128-bit compare-and-swap, retried on conflict after a short spin. A
// denial writes nothing.
//
// Step, Pack and Unpack are exported so the same counter can live in another
// store.
//
// # What a window cannot do
//
// There is no Reserve or Wait: a reservation takes units now to be used
// later, but the counter has no time to charge them at. Counted in the
// current window they would be counted away from the time they are used
// (the estimate would forget them a window after now, not after their use);
// counted in a future window, which the two counts do not hold, they would
// need a third. A caller that must wait sleeps for RetryAfter and asks
// again. There is no SetRate or SetBurst either: counts already admitted
// under one limit and window have no meaning under another window length.
//
// # Time at the ends of int64
//
// Times are compared as differences in uint64 (Advance), never as a sum
// that could wrap: a window start plus W is formed only where it is at most
// now, a start minus W only where it is above a now, and RetryAfter is
// summed with its carry checked (slide.After). End-of-time rule: a request
// that would first fit at a time past math.MaxInt64 gets RetryAfter
// limit.Never (that time never comes), as does a wait longer than
// math.MaxInt64 ns. Otherwise the contract holds for now anywhere in the
// int64 range, including a window that starts within W of math.MaxInt64
// (its end is never formed).
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
//
// AllowAt, AllowNAt and TakeAt are hand loops, not cell.Run128: the runner's indirect
// call to the step cost them more than 5% (the package benchmarks, before
// and after, in one run). They run the same pure steps.
func (l *Limiter) AllowAt(now int64) bool {
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
		next, ok := l.p.Undo(Unpack(v1, v2), before, after)
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
