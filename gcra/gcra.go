// Package gcra is a lock-free rate limiter (the Generic Cell Rate Algorithm)
// whose whole state is one 64-bit theoretical arrival time. Use it for the
// cheapest exact decision of one limit: events per period on average, with
// bursts of up to burst events. See ExampleLimiter; ExampleLimiter_Wait and
// ExampleLimiter_ReserveAt show waiting and reservations.
//
// Allow and AllowN decide at once; Reserve takes events now for a later time
// and Wait sleeps until then; Refund and Reservation.Cancel give events back.
// A denial reads the state and writes nothing, so a mostly-denying limiter
// does not write its cache line. Time is int64 nanoseconds on a fixed-origin
// clock (package nanotime): each method has an ...At twin taking now; the
// plain form reads the Limiter's clock, nanotime.Now unless WithClock gave
// another. A parameter out of range is a *limit.ParamError.
//
// # From golang.org/x/time/rate
//
// Package rate keeps x/time/rate's API, for a change of import. To move to
// this package instead: rate.NewLimiter(rate.Every(d), b) is New(1, d, b)
// and rate.NewLimiter(r, b) is NewRate(float64(r), b), each with an error
// for values out of range; Allow, Wait and WaitN(ctx, n) keep their names;
// AllowN(time.Now(), n) is AllowN(n), which returns a limit.Result (OK,
// Remaining, RetryAfter) and an error for an n no limiter can admit;
// ReserveN(time.Now(), n) is ReserveN(n), whose Reservation has the fields
// OK and Wait where x/time/rate has the methods OK and Delay; SetLimit is
// SetRate, in events per second. The ...At forms take now as int64
// nanoseconds from nanotime.Now, not a time.Time. There are no Limit and
// Burst getters, no SetBurst (package bucket has one) and no infinite
// rate (the fastest is one event a nanosecond).
//
// # Contract
//
// For a limiter of events per period and burst b, the admitted cost whose now
// values lie in any closed interval of length t is at most
// b + events*t/period, exactly, on every schedule: concurrent callers, now
// values out of order or stale, huge jumps, now anywhere in the int64 range.
// Reserved events count at their time to act (now + the wait), refunded ones
// not at all.
//
// The one rounding is against the caller: when a request finds the limiter
// full, it loses under 2 ns of refill, once per idle period. When the
// interval period/events is a whole number of ns the limiter admits
// everything the ideal GCRA admits. A chain of whole-burst requests (every
// request at burst 1) cannot keep the exact rate when n*period/events is not
// a whole number of ns: give the burst one more event, or use package pacer.
//
// An admission or reservation whose arrival time would pass math.MaxInt64
// (less two steps of at most 2 ns, which SetRate keeps for itself) is
// refused, with RetryAfter limit.Never: near the end of time a limiter
// admits only while its state fits.
//
// SetRate changes the rate while the limiter runs, carrying the events owed
// over (see SetRateAt for the bound across a change); a Limiter is then an
// adaptive.Setter.
//
// The integer arithmetic and its one rounding are explained in the
// project's ARCHITECTURE.md.
package gcra

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"sync/atomic"
	"time"

	"golang.org/x/sys/cpu"

	"github.com/cellrate/cellrate/internal/backoff"
	"github.com/cellrate/cellrate/internal/gcrastep"
	"github.com/cellrate/cellrate/internal/wait"
	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/nanotime"
)

// Limiter is a GCRA in a sync/atomic cell. It is safe for concurrent use;
// every decision is a load of the current generation (its Params and
// cell; SetRate makes a new one), a load of the state, the step, and (only
// when admitting) one compare-and-swap, retried on conflict after a short
// spin (which lets the core that won keep the line for its next calls).
// The state is padded to its own cache line.
//
// The zero Limiter has burst 0: it admits nothing, refusing every n > 0 with
// limit.ErrCostExceedsBurst (as x/time/rate's zero Limiter rejects every
// event); make a Limiter with New. A Limiter must not be copied after first
// use (go vet reports copies): a copy would admit on its own.
type Limiter struct {
	cur   atomic.Pointer[gen] // the current generation once the first is retired
	clock nanotime.Clock      // nil for nanotime.Now
	gen                       // the first generation
}

// gen is one generation of a Limiter: Params and the TAT they govern (the
// TAT's steps depend on the rate). SetRate retires a generation and hands
// its TAT, converted, to the next (see setrate.go).
type gen struct {
	ps   gcrastep.Params
	id   uint64           // the generation's number, for receipts
	_    cpu.CacheLinePad // tat's line holds nothing the reads of ps would miss on
	tat  atomic.Uint64
	_    cpu.CacheLinePad
	next atomic.Pointer[gen] // the successor, set once retirement begins
	from atomic.Uint64       // the TAT this generation held when retired
	at   int64               // now of the SetRate that retired it
}

// Option configures a Limiter.
type Option func(*config)

type config struct {
	clock    nanotime.Clock
	setClock bool
}

// WithClock makes the plain (non-At) methods and Wait read clock instead of
// nanotime.Now: for example nanotime.Since(), which follows testing/synctest's
// fake time. A nil clock is a *limit.ParamError (Param "clock") from New.
func WithClock(clock nanotime.Clock) Option {
	return func(c *config) { c.clock, c.setClock = clock, true }
}

// New returns a full Limiter that admits events per period on average and at
// most burst at once. It returns a *limit.ParamError for events, period or
// burst below 1, a rate above one event per nanosecond (Param "events", Max
// the period in ns), or burst*period/events above 2^62 ns (146 years; Param
// "burst", Max the largest burst that fits).
func New(events int64, period time.Duration, burst int64, opts ...Option) (*Limiter, error) {
	ps, err := gcrastep.NewParams(events, period, burst)
	if err != nil {
		return nil, err
	}
	return fromParams(ps, opts...)
}

// NewRate returns a full Limiter that admits rate events per second on
// average and at most burst at once. The float is read as the fraction
// num/den nearest to it with den <= 2^32 and within 2^-50 of it relatively
// (0.5, 1e-3 and 1.0/3 become 1/2, 1/1000 and 1/3 exactly), that is num
// events per den seconds; use New to give the rate exactly. It returns a
// *limit.ParamError (Param "rate") for a rate that is not finite and
// positive, has no such fraction (below about 2^-32), or exceeds one event
// per nanosecond, and New's errors for burst.
func NewRate(rate float64, burst int64, opts ...Option) (*Limiter, error) {
	ps, err := gcrastep.RateParams(rate, burst)
	if err != nil {
		return nil, err
	}
	return fromParams(ps, opts...)
}

// fromParams returns a full Limiter with Params ps.
func fromParams(ps gcrastep.Params, opts ...Option) (*Limiter, error) {
	var c config
	for i, o := range opts {
		if o == nil {
			return nil, &limit.ParamError{Pkg: "gcra", Param: "option", Value: i, Reason: "a nil Option"}
		}
		o(&c)
	}
	if c.setClock && c.clock == nil {
		return nil, gcrastep.ParamErr("clock", nil, nil, nil, "a nil clock")
	}
	return &Limiter{clock: c.clock, gen: gen{ps: ps}}, nil
}

// now reads the Limiter's clock.
func (l *Limiter) now() int64 {
	if l.clock != nil {
		return l.clock()
	}
	return nanotime.Now()
}

// state returns the limiter's state now (in the live generation's steps).
func (l *Limiter) state() gcrastep.State {
	_, tat := l.live()
	return gcrastep.State(tat)
}

// Allow is AllowAt with the Limiter's clock.
func (l *Limiter) Allow() bool { return l.AllowAt(l.now()) }

// AllowAt reports whether one event may happen at now, and records it if so.
func (l *Limiter) AllowAt(now int64) bool {
	// AllowAt, AllowNAt and TakeAt are hand loops, not cell.Run64: the
	// runner's indirect call to the step cost them more than 5% (the package
	// benchmarks, before and after, in one run). They run the same pure
	// steps; AllowAt has Params.admit written out (admit is too big to
	// inline), its inequality still Params.Waits.
	// A retired TAT always waits or carries, so the generation is checked
	// for only on those rare paths.
	g := l.load()
	ps := &g.ps
	a := ps.At(now, ps.J) // outside the loop: a retry does not redo it
	var spin backoff.Spin
	for ; ; spin.Wait() {
		tat := g.tat.Load()
		kh, kl, wait := ps.Waits(gcrastep.State(tat), a)
		if wait {
			if tat <= maxTAT {
				return false // a denial writes nothing
			}
			g = l.move(g)
			ps, a = &g.ps, g.ps.At(now, g.ps.J)
			continue
		}
		// next+2 carries iff next would pass maxTAT.
		next, carry := bits.Add64(tat, ps.J+2, 0)
		next -= 2
		if carry != 0 || next == tat || gcrastep.Behind(kh, kl, a) {
			if tat > maxTAT {
				g = l.move(g)
				ps, a = &g.ps, g.ps.At(now, g.ps.J)
				continue
			}
			s, ok := ps.Settle(gcrastep.State(tat), a, ps.J, false)
			if !ok || uint64(s) > maxTAT {
				return false
			}
			next = uint64(s)
		}
		if g.tat.CompareAndSwap(tat, next) {
			return true
		}
	}
}

// AllowN is AllowNAt with the Limiter's clock.
func (l *Limiter) AllowN(n int64) (limit.Result, error) { return l.AllowNAt(l.now(), n) }

// AllowNAt admits n events at now if all n fit, else none. n < 0 returns
// limit.ErrNegativeCost and n > burst limit.ErrCostExceedsBurst, each with a
// Result that is not OK and RetryAfter limit.Never; n == 0 is admitted and
// changes nothing.
func (l *Limiter) AllowNAt(now, n int64) (limit.Result, error) {
	var spin backoff.Spin
	for ; ; spin.Wait() {
		g, tat := l.live()
		next, r, err := g.step(gcrastep.State(tat), now, n)
		if !r.OK || uint64(next) == tat || g.tat.CompareAndSwap(tat, uint64(next)) {
			return r, err
		}
	}
}

// TakeAt is AllowNAt that also returns, when it admits n > 0, the Receipt
// Refund needs to give the events back (limit.Member).
func (l *Limiter) TakeAt(now, n int64) (limit.Result, limit.Receipt, error) {
	var spin backoff.Spin
	for ; ; spin.Wait() {
		g, tat := l.live()
		next, r, err := g.step(gcrastep.State(tat), now, n)
		if !r.OK || uint64(next) == tat {
			return r, limit.Receipt{}, err
		}
		if g.tat.CompareAndSwap(tat, uint64(next)) {
			return r, limit.Receipt{At: now, N: n, Before: [2]uint64{tat, g.id}, After: [2]uint64{uint64(next), g.id}}, nil
		}
	}
}

// Refund gives back the events of the admission that returned rc (see
// limit.Member), exactly when the TAT is still the one that admission
// stored: when no other event was admitted since, or all admitted since were
// given back. Otherwise it gives back nothing: later admissions were decided
// with those events taken, and the TAT cannot tell how much of them the
// limiter would have refilled anyway while full, so giving them back could
// pass the bound. limit.All refunds at once, so that is rare; put a GCRA that
// many callers share last in an All, where it is never refunded. Nothing is
// given back across a SetRate: the TAT is then counted in other steps.
func (l *Limiter) Refund(rc limit.Receipt) {
	if rc.N == 0 {
		return
	}
	l.undo(rc.Before[1], gcrastep.State(rc.Before[0]), gcrastep.State(rc.After[0]))
}

// Remaining is RemainingAt with the Limiter's clock.
func (l *Limiter) Remaining() int64 { return l.RemainingAt(l.now()) }

// RemainingAt returns the whole events a request at now could take.
func (l *Limiter) RemainingAt(now int64) int64 {
	g, tat := l.live()
	return g.ps.RemainingAt(gcrastep.State(tat), now)
}

// Tokens is TokensAt with the Limiter's clock.
func (l *Limiter) Tokens() float64 { return l.TokensAt(l.now()) }

// TokensAt returns the events available at now, with their fraction: burst
// when full, below 0 while reservations are owed. It is for display;
// decisions never use floating point.
func (l *Limiter) TokensAt(now int64) float64 {
	g, tat := l.live()
	return g.ps.TokensAt(gcrastep.State(tat), now)
}

// Reservation is a cost taken from the limiter now, to be used after a wait.
// The zero Reservation is not OK and cancels to nothing.
type Reservation struct {
	// OK reports whether the events were taken. A reservation is refused
	// for an n below 0 or above the burst (with the error; the zero
	// Limiter's burst is 0) and at the end of time (see the package doc).
	OK bool
	// Wait is how long after the reservation's now the caller must wait
	// before acting; 0 when the events were there at once, limit.Never
	// when OK is false.
	Wait time.Duration

	l             *Limiter
	id            uint64 // the generation it was taken from
	before, after gcrastep.State
	act           int64 // the reservation's now plus Wait
}

// Reserve is ReserveN(1).
func (l *Limiter) Reserve() (Reservation, error) { return l.ReserveNAt(l.now(), 1) }

// ReserveN is ReserveNAt with the Limiter's clock.
func (l *Limiter) ReserveN(n int64) (Reservation, error) { return l.ReserveNAt(l.now(), n) }

// ReserveAt is ReserveNAt(now, 1).
func (l *Limiter) ReserveAt(now int64) (Reservation, error) { return l.ReserveNAt(now, 1) }

// ReserveNAt takes n events at now whether or not they are available, by
// pushing the limiter's state as an admission at now+Wait would, and
// returns how long to wait: the caller acts at now+Wait. Later decisions see
// the pushed state, so the bound holds for reserved events counted at their
// time to act. n < 0 and n > burst return AllowNAt's errors and a Reservation
// that is not OK.
func (l *Limiter) ReserveNAt(now, n int64) (Reservation, error) {
	// The loop is written out, not run by cell.Run64: returning the
	// Reservation through the runner's closure cost about twice the whole
	// call (BenchmarkReserveAt, runner against this loop in one run). It
	// runs the same pure step, Params.Reserve.
	var spin backoff.Spin
	for ; ; spin.Wait() {
		g, tat := l.live()
		next, wait, ok, err := g.ps.Reserve(gcrastep.State(tat), now, n)
		if !ok || uint64(next) > maxTAT {
			return Reservation{Wait: limit.Never}, err
		}
		if uint64(next) == tat || g.tat.CompareAndSwap(tat, uint64(next)) {
			return Reservation{OK: true, Wait: wait, l: l, id: g.id, before: gcrastep.State(tat), after: next, act: now + int64(wait)}, nil
		}
	}
}

// Cancel is CancelAt with the Limiter's clock.
func (r *Reservation) Cancel() bool {
	if r.l == nil {
		return false
	}
	return r.CancelAt(r.l.now())
}

// CancelAt gives the reservation's events back, and reports whether it did.
// Rule: only if now is not after the time to act and the TAT is still the
// one the reservation stored (nothing was admitted or reserved on top of
// it); the limiter is then exactly as if the reservation had never been
// made, so the bound cannot break. Otherwise the events stay taken. Only the
// first call can give anything back, and nothing is given back across a
// SetRate. A copy of a Reservation is the same reservation: cancel it
// through one copy only, since a second copy's cancel after the same events
// were reserved again at the same instant would give back that later
// reservation's events.
func (r *Reservation) CancelAt(now int64) bool {
	ok := r.OK && r.before != r.after && now <= r.act
	r.OK = false
	if !ok {
		return false
	}
	return r.l.undo(r.id, r.before, r.after)
}

// ErrDeadline is returned by Wait when the context's deadline comes before
// the events would; errors.Is(ErrDeadline, context.DeadlineExceeded) holds.
var ErrDeadline = fmt.Errorf("gcra: wait would pass the context deadline: %w", context.DeadlineExceeded)

// ErrEndOfTime is returned by Wait when the reservation is refused at the
// end of int64 time (see the package doc).
var ErrEndOfTime = errors.New("gcra: the wait would pass the end of int64 time")

// Wait is WaitN(ctx, 1).
func (l *Limiter) Wait(ctx context.Context) error { return l.WaitN(ctx, 1) }

// WaitN blocks until n events may happen and takes them, or until ctx is
// done. It reserves at once, so waiters are served in order; if ctx ends
// first (or its deadline is sooner than the wait, in which case WaitN returns
// ErrDeadline without blocking) the reservation is cancelled under
// CancelAt's rule. Its timer is stopped on every path.
func (l *Limiter) WaitN(ctx context.Context, n int64) error {
	var r Reservation
	return wait.For(ctx, l.now, func(now int64) (int64, bool, error) {
		var err error
		r, err = l.ReserveNAt(now, n)
		return int64(r.Wait), r.OK, err
	}, func(now int64) { r.CancelAt(now) }, ErrEndOfTime, ErrDeadline)
}

var _ limit.Member = (*Limiter)(nil)
