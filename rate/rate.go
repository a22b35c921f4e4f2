// Package rate is golang.org/x/time/rate's API, exact and lock-free: the
// same types, functions and methods, so moving is a change of import. See
// ExampleLimiter.
//
// It is built on package bucket: tokens are exact fractions instead of
// float64s. Allow, AllowN and Reserve take no lock; Allow and AllowN
// allocate nothing, and Reserve only the Reservation it returns (64 bytes,
// as x/time/rate's). SetLimit and SetBurst take a mutex among themselves.
// The plain methods
// read time.Now, so they follow testing/synctest's fake clock. A time.Time is
// read as t.Sub of the time NewLimiter was called: times from time.Now use
// the monotonic clock, times without a monotonic reading (time.Unix, a time
// from the wire) the wall clock.
//
// Contract: for a finite Limit r > 0 and burst b >= 1, the tokens admitted
// (by AllowN, and by reservations counted at their time to act) with times in
// any closed interval of length t are at most b + r*t, exactly, on every
// schedule: concurrent callers, times out of order, any time.Time. Every(d)
// is read as exactly one token per d.
//
// Differences from golang.org/x/time/rate, each on purpose:
//
//   - A time before the limiter's last one refills nothing, where
//     x/time/rate counts that refill again and admits more than the rate.
//   - Cancel gives tokens back only while no other decision was taken since
//     the reservation; otherwise they stay taken, since later reservations
//     already wait for them. A cancel after SetLimit or SetBurst gives back
//     nothing.
//   - A reservation a zero (or too small) Limit can never serve is refused
//     (not OK) and takes nothing; x/time/rate takes the tokens and returns an
//     infinite delay. WaitN with no deadline then blocks until the limit is
//     raised or ctx is done.
//   - n < 0 is never admitted (x/time/rate adds -n tokens).
//   - A burst larger than the bucket can hold at the limit (2^61 units) is
//     clamped; Burst still returns the burst given.
//   - Waits are rounded up to a whole nanosecond, never acting early.
//   - A WaitN whose wait would pass ctx's deadline reserves and cancels at
//     once: if another caller reserved in between, the tokens stay taken.
//
// How times map to nanoseconds, and the exact rule of each difference, are
// in the project's ARCHITECTURE.md.
package rate

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cellrate/cellrate/internal/bucketcore"
)

// Limit is a rate of events per second, as in x/time/rate. A zero Limit
// allows no events (after the burst).
type Limit float64

// Inf is the infinite rate limit: it allows every event, whatever the burst.
const Inf = Limit(math.MaxFloat64)

// InfDuration is the Delay of a Reservation that is not OK.
const InfDuration = time.Duration(math.MaxInt64)

// Every converts a minimum time between events to a Limit: Inf for an
// interval <= 0, else 1/interval.Seconds(), the same float as x/time/rate's
// (a Limiter reads it back as exactly one token per interval).
func Every(interval time.Duration) Limit {
	if interval <= 0 {
		return Inf
	}
	return 1 / Limit(interval.Seconds())
}

// Limiter is a token bucket of burst b, initially full, refilled at r tokens
// per second, with x/time/rate's methods. Many goroutines may use it at once.
//
// The zero value is a valid Limiter that rejects every event but n = 0 (as
// x/time/rate's does) until SetLimit and SetBurst give it a limit and a
// burst. A Limiter must not be copied after first use.
type Limiter struct {
	cur atomic.Pointer[shape]
	mu  sync.Mutex // serializes SetLimitAt and SetBurstAt
}

// NewLimiter returns a Limiter that allows events up to rate r with bursts
// of at most b tokens, full at first.
func NewLimiter(r Limit, b int) *Limiter {
	l := new(Limiter)
	base := time.Now()
	l.cur.Store(build(r, b, base))
	return l
}

// load returns the current shape; the zero Limiter's is closed.
func (l *Limiter) load() *shape {
	if s := l.cur.Load(); s != nil {
		return s
	}
	return &zeroShape
}

// Limit returns the Limit given to NewLimiter or SetLimit.
func (l *Limiter) Limit() Limit { return l.load().limit }

// Burst returns the burst given to NewLimiter or SetBurst: the most tokens
// one call may take (see the package doc for bursts the bucket clamps).
func (l *Limiter) Burst() int { return l.load().burst }

// Tokens is TokensAt(time.Now()).
func (l *Limiter) Tokens() float64 { return l.TokensAt(time.Now()) }

// TokensAt returns the tokens available at t, negative while reservations
// are owed. It is for display: the float rounds; decisions never use it.
func (l *Limiter) TokensAt(t time.Time) float64 {
	s := l.load()
	switch s.kind {
	case finite:
		return s.b.TokensAt(s.at(t))
	case frozen:
		tok := float64(max(s.pool.n.Load(), 0))
		if s.paused != nil {
			tok += s.paused.TokensAt(s.phi) // the fraction, or the debt
		}
		return min(tok, float64(s.burst))
	case infinite:
		return float64(s.burst)
	}
	return 0
}

// Allow is AllowN(time.Now(), 1).
func (l *Limiter) Allow() bool {
	s := l.load()
	if s.kind == finite {
		return s.b.AllowAt(s.since())
	}
	return l.AllowN(time.Now(), 1)
}

// AllowN reports whether n events may happen at t, and takes n tokens if
// so. Use it to drop or skip events over the limit; otherwise use Reserve
// or Wait.
func (l *Limiter) AllowN(t time.Time, n int) bool {
	for {
		s := l.load()
		switch s.kind {
		case finite:
			if n == 1 {
				return s.b.AllowAt(s.at(t))
			}
			r, _ := s.b.AllowNAt(s.at(t), int64(n))
			return r.OK
		case frozen:
			ok, open := s.take(n)
			if !open {
				runtime.Gosched() // a setter is replacing s
				continue
			}
			return ok
		case infinite:
			return n >= 0
		}
		return n == 0 && s.burst >= 0
	}
}

// Reserve is ReserveN(time.Now(), 1).
func (l *Limiter) Reserve() *Reservation { return l.ReserveN(time.Now(), 1) }

// ReserveN takes n tokens at t whether or not they are there, running the
// bucket into debt, and returns a Reservation that says how long to wait
// before acting (see Reservation). The Reservation is not OK, and nothing is
// taken, when n < 0, n > burst, at a zero Limit when the tokens are not
// there, or when the bucket's debt would pass 2^62 units (bucket's
// end-of-time rule).
func (l *Limiter) ReserveN(t time.Time, n int) *Reservation {
	r := new(Reservation)
	l.reserve(t, n, r)
	return r
}

// reserve is ReserveN written into r.
func (l *Limiter) reserve(t time.Time, n int, r *Reservation) {
	for {
		s := l.load()
		switch s.kind {
		case finite:
			now := s.at(t)
			br, err := s.b.ReserveNAt(now, int64(n))
			if err != nil || !br.OK {
				*r = Reservation{}
				return
			}
			*r = Reservation{act: t.Add(br.Wait), held: br.Held()}
			if !r.held.Live() {
				r.pool = &okPool // it took nothing
			}
			return
		case frozen:
			ok, open := s.take(n)
			if !open {
				runtime.Gosched()
				continue
			}
			if !ok {
				*r = Reservation{}
				return
			}
			*r = Reservation{act: t, pool: s.pool}
			r.held.Units = uint64(n)
			return
		case infinite:
			if n < 0 {
				*r = Reservation{}
				return
			}
			*r = Reservation{act: t, pool: &okPool}
			return
		}
		if n != 0 || s.burst < 0 {
			*r = Reservation{}
			return
		}
		*r = Reservation{act: t, pool: &okPool}
		return
	}
}

// Wait is WaitN(ctx, 1).
func (l *Limiter) Wait(ctx context.Context) error { return l.WaitN(ctx, 1) }

// WaitN blocks until n tokens are available and takes them, or until ctx
// is done. It returns an error if n exceeds the burst (unless the Limit is
// Inf), if ctx is done, or if the wait would pass ctx's deadline (then it
// returns at once). It reserves at once, so waiters are served in order; a
// wait cut short by ctx is cancelled under Reservation.CancelAt's rule. At a
// zero Limit it waits for the limit to be raised (see the package doc).
func (l *Limiter) WaitN(ctx context.Context, n int) error {
	for {
		s := l.load()
		if n > s.burst && s.kind != infinite {
			return fmt.Errorf("rate: Wait(n=%d) exceeds limiter's burst %d", n, s.burst)
		}
		if n < 0 {
			return fmt.Errorf("rate: Wait(n=%d): n is negative", n)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		t := time.Now()
		dl, hasDL := ctx.Deadline()
		if s.kind == frozen {
			ok, open := s.take(n)
			switch {
			case !open:
				runtime.Gosched()
				continue
			case ok:
				return nil
			case hasDL:
				return fmt.Errorf("rate: Wait(n=%d) would exceed context deadline", n)
			}
			select {
			case <-s.resume:
				continue // the limit changed: try under the new one
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		var r Reservation
		l.reserve(t, n, &r)
		if !r.ok() {
			if s.kind == finite && int64(n) > s.b.Params().Burst() {
				return fmt.Errorf("rate: Wait(n=%d) exceeds the %d tokens the bucket holds at limit %v", n, s.b.Params().Burst(), s.limit)
			}
			return fmt.Errorf("rate: Wait(n=%d) would exceed the bucket's debt limit", n)
		}
		delay := r.DelayFrom(t)
		if delay == 0 {
			return nil
		}
		if hasDL && dl.Sub(t) < delay {
			r.CancelAt(t)
			return fmt.Errorf("rate: Wait(n=%d) would exceed context deadline", n)
		}
		tm := time.NewTimer(delay)
		defer tm.Stop()
		select {
		case <-tm.C:
			return nil
		case <-ctx.Done():
			r.Cancel()
			return ctx.Err()
		}
	}
}

// SetLimit is SetLimitAt(time.Now(), newLimit).
func (l *Limiter) SetLimit(newLimit Limit) { l.SetLimitAt(time.Now(), newLimit) }

// SetLimitAt sets a new Limit from t on, keeping the tokens (see the package
// doc for each kind of Limit). Reservations already made keep their time to
// act: the new Limit may be exceeded by those not yet acted on, as in
// x/time/rate.
func (l *Limiter) SetLimitAt(t time.Time, newLimit Limit) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.load()
	l.set(t, s, newLimit, s.burst)
}

// SetBurst is SetBurstAt(time.Now(), newBurst).
func (l *Limiter) SetBurst(newBurst int) { l.SetBurstAt(time.Now(), newBurst) }

// SetBurstAt sets a new burst from t on, keeping the tokens up to it.
func (l *Limiter) SetBurstAt(t time.Time, newBurst int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.load()
	l.set(t, s, s.limit, newBurst)
}

// A Reservation is tokens taken from a Limiter, to be used after a delay.
// The zero Reservation is not OK. A Reservation must not be copied (go vet
// reports copies): once a reservation is cancelled and the same tokens are
// reserved again, a copy's Cancel could give back the new reservation's.
type Reservation struct {
	_   noCopy
	act time.Time // the time to act
	// pool is where a zero Limit's tokens (held.Units of them) go back;
	// okPool marks an OK Reservation with nothing (more) to give back, nil
	// with no bucket units held, one that is not OK.
	pool *pool
	held bucketcore.Held // a finite Limit's units
}

// noCopy makes go vet's copylocks check report copies of a Reservation.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}

// okPool is the pool of OK Reservations that hold nothing to give back.
var okPool pool

// ok reports whether the Reservation is OK.
func (r *Reservation) ok() bool { return r.pool != nil || r.held.Live() }

// OK reports whether the tokens were taken. If not, Delay returns
// InfDuration and Cancel does nothing.
func (r *Reservation) OK() bool { return r.ok() }

// Delay is DelayFrom(time.Now()).
func (r *Reservation) Delay() time.Duration { return r.DelayFrom(time.Now()) }

// DelayFrom returns how long after t the holder must wait before acting: 0
// to act at once, InfDuration when the Reservation is not OK.
func (r *Reservation) DelayFrom(t time.Time) time.Duration {
	if !r.ok() {
		return InfDuration
	}
	return max(r.act.Sub(t), 0)
}

// Cancel is CancelAt(time.Now()).
func (r *Reservation) Cancel() { r.CancelAt(time.Now()) }

// CancelAt says the holder will not act, and gives the tokens back if t is
// not after the time to act and nothing was decided on the bucket since the
// reservation (the bucket is then as if the reservation had never been
// made). Otherwise the tokens stay taken. At a zero Limit the tokens go back
// while the limit is still 0. Only the first call can give anything back.
func (r *Reservation) CancelAt(t time.Time) {
	if !r.ok() || t.After(r.act) {
		return
	}
	switch {
	case r.held.Live():
		r.held.Cancel()
		r.pool = &okPool
	case r.pool != &okPool:
		r.pool.put(int64(r.held.Units))
		r.pool = &okPool
	}
}
