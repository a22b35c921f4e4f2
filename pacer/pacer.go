// Package pacer spaces callers evenly at a rate: Wait blocks each caller
// until its own slot, like go.uber.org/ratelimit's Take, on a lock-free
// GCRA (package gcra) with a bounded slack, a context, and no busy-waiting.
// Use it to space calls to a backend that wants a steady rate rather than
// bursts; to admit or deny at once, use package gcra. See ExamplePacer.
//
// # Contract
//
// A Pacer of events per period, interval T = period/events, and slack s
// hands out slots: each Wait (or Reserve) takes the next one, in the order
// the takes reach the Pacer's cell. The slots are a GCRA schedule of rate
// 1/T and burst 1+s, kept exactly (T is a fraction of a ns, see package
// gcra): a request that finds the GCRA conforming gets a slot at its now; one
// that does not gets the schedule's next time, rounded up to a whole ns, and
// pushes the schedule by exactly T. So:
//
//   - over any closed interval of length t, at most 1 + s + (t+1ns)/T slots
//     (the 1 ns is the rounding up; with T a whole number of ns, at most
//     1 + s + t/T), whatever the callers do, concurrent or not, and however
//     long they were idle;
//   - a caller that keeps taking, each time before its next slot has
//     passed, gets slot k at k*T after its first, to within 3 ns (the ns and
//     gcra's step grid), for every k: no drift, whatever its wake-up delays
//     below T. With slack s it may come back up to (s+1)*T late and still
//     catch up; later than that, the schedule restarts from its now, since a
//     burst beyond the slack is what the slack forbids. With s = 0,
//     consecutive slots are at least floor(T) apart, and T on average;
//   - after idling, at most s slots come early (bunched at the idle's end)
//     before the spacing resumes: slack is a bound, not a debt.
//
// Wait sleeps on a timer until its slot, never spinning; a slot already
// due returns at once. A slot is the Pacer's clock reading to act at; the
// wake-up comes when the runtime runs the timer, so a caller proceeds at or
// after its slot.
//
// # Contexts
//
// Wait returns ctx.Err() when ctx is done before its slot, and
// ErrDeadline, at once, when ctx's deadline is before the slot. Either way
// it gives its slot back if no slot was taken after it (the Pacer is then
// as if the Wait never happened); otherwise the slot stays used, as a gap
// in the schedule, because later callers already wait on theirs.
//
// # Time
//
// Times are int64 nanoseconds on the Pacer's clock (nanotime.Now unless
// WithClock gives another); ReserveAt takes the caller's now. The end of
// time is gcra's: a slot past math.MaxInt64 is refused (ReserveAt's ok is
// false, Wait returns ErrEndOfTime).
package pacer

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"golang.org/x/sys/cpu"

	"github.com/cellrate/cellrate/internal/backoff"
	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/nanotime"
)

// ErrDeadline is returned by Wait when the context's deadline comes before
// the slot; errors.Is(ErrDeadline, context.DeadlineExceeded) holds.
var ErrDeadline = fmt.Errorf("pacer: the slot is after the context deadline: %w", context.DeadlineExceeded)

// ErrEndOfTime is returned by Wait when the next slot would pass the end
// of int64 time.
var ErrEndOfTime = errors.New("pacer: the next slot would pass the end of int64 time")

// ErrNoRate is returned by the zero Pacer's Wait: it has no rate, so no slot
// ever comes.
var ErrNoRate = errors.New("pacer: the zero Pacer has no rate: make one with New")

// Pacer hands out evenly spaced slots. It is safe for concurrent use. The
// zero Pacer has no rate: it hands out no slot (its Reservations are not OK
// and its Wait returns ErrNoRate); make one with New. A Pacer must not be
// copied after first use (go vet reports copies).
type Pacer struct {
	s     schedule
	slack int64
	clock nanotime.Clock
	_     cpu.CacheLinePad
	tat   atomic.Uint64 // the GCRA's state (see gcra.go)
	_     cpu.CacheLinePad
}

// Option configures a Pacer.
type Option func(*config)

type config struct {
	slack int64
	clock nanotime.Clock
}

// WithSlack lets up to n slots come early after an idle period (0 by
// default: strict spacing). n >= 0.
func WithSlack(n int64) Option { return func(c *config) { c.slack = n } }

// WithClock makes Wait and Reserve read clock instead of nanotime.Now.
func WithClock(clock nanotime.Clock) Option { return func(c *config) { c.clock = clock } }

// New returns a Pacer of events per period. It returns a *limit.ParamError
// for events or period below 1, a rate above one event per nanosecond, a
// negative slack, (1+slack)*period/events above 2^62 ns, or a nil clock.
func New(events int64, period time.Duration, opts ...Option) (*Pacer, error) {
	c := config{clock: nanotime.Now}
	for i, o := range opts {
		if o == nil {
			return nil, &limit.ParamError{Pkg: "pacer", Param: "option", Value: i, Reason: "a nil Option"}
		}
		o(&c)
	}
	switch {
	case events < 1:
		return nil, &limit.ParamError{Pkg: "pacer", Param: "events", Value: events, Min: int64(1)}
	case period < 1:
		return nil, &limit.ParamError{Pkg: "pacer", Param: "period", Value: period, Min: time.Duration(1)}
	case c.slack < 0 || c.slack == int64(limit.Never):
		return nil, &limit.ParamError{Pkg: "pacer", Param: "slack", Value: c.slack, Min: int64(0)}
	case c.clock == nil:
		return nil, &limit.ParamError{Pkg: "pacer", Param: "clock", Value: nil, Reason: "the clock must not be nil"}
	}
	s, err := newSchedule(events, period, c.slack)
	if err != nil {
		return nil, err
	}
	return &Pacer{s: s, slack: c.slack, clock: c.clock}, nil
}

// Slack returns how many slots may come early after an idle period.
func (p *Pacer) Slack() int64 { return p.slack }

// Reservation is a slot taken by Reserve.
type Reservation struct {
	// OK reports whether a slot was taken: false for the zero Pacer and at
	// the end of time.
	OK bool
	// Wait is how long after the reservation's now the slot is; limit.Never
	// when OK is false, so a caller that sleeps Wait without reading OK
	// never acts.
	Wait time.Duration

	p             *Pacer
	before, after uint64
}

// Reserve is ReserveAt with the Pacer's clock.
func (p *Pacer) Reserve() Reservation { return p.ReserveAt(p.now()) }

// now reads the Pacer's clock, nanotime.Now for the zero Pacer.
func (p *Pacer) now() int64 {
	if p.clock == nil {
		return nanotime.Now()
	}
	return p.clock()
}

// ReserveAt takes the next slot at now without waiting: the caller acts
// Wait ns after now.
func (p *Pacer) ReserveAt(now int64) Reservation {
	// The loop is written out rather than run by cell.Run64: returning the
	// Reservation through the generic runner's closure cost 2.5-3x the whole
	// call in a one-run benchmark. It calls the same step, schedule.reserve.
	var spin backoff.Spin
	for ; ; spin.Wait() {
		tat := p.tat.Load()
		next, wait, ok := p.s.reserve(tat, now)
		if !ok {
			return Reservation{Wait: limit.Never}
		}
		if p.tat.CompareAndSwap(tat, next) {
			return Reservation{OK: true, Wait: time.Duration(wait), p: p, before: tat, after: next}
		}
	}
}

// Cancel gives the slot back if no slot was taken after it, and reports
// whether it did. Only the first call can give anything back.
func (r *Reservation) Cancel() bool {
	ok := r.OK && r.p.tat.CompareAndSwap(r.after, r.before)
	r.OK = false
	return ok
}

// Wait blocks until the caller's slot and returns nil, or returns early
// with ctx's error, ErrDeadline or ErrEndOfTime (see the package doc). A
// Wait whose slot is due allocates nothing; one that sleeps allocates its
// timer, stopped on every path. (A pool of timers would save that, but a
// timer belongs to the testing/synctest bubble that made it.)
func (p *Pacer) Wait(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	r := p.Reserve()
	switch {
	case !r.OK && p.s.ps.Burst() == 0:
		return ErrNoRate
	case !r.OK:
		return ErrEndOfTime
	}
	if r.Wait == 0 {
		return nil
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < r.Wait {
		r.Cancel()
		return ErrDeadline
	}
	t := time.NewTimer(r.Wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		r.Cancel()
		return ctx.Err()
	}
}
