// Package bucket is a lock-free token bucket with exact fractional tokens,
// whose whole state is 128 bits in an atomic128 cell.
//
// Contract: for a bucket refilling r tokens per second with burst b, the
// cost admitted with now values in any closed interval of length t is at
// most b + r*t, exactly, on every schedule: concurrent callers, stale or
// out-of-order now values, jumps of years, now anywhere in the int64 range.
// Reserved tokens count at their time to act (now+Wait), loans (TakeUpToAt)
// at their take, less what GiveBack returned. A stale now never refills
// the bucket. A denial writes nothing.
//
// Exactness: the state is (T, Deficit), a 64-bit timestamp in ns and a
// 64-bit count of missing units, where one token is Unit() units: with the
// rate in lowest terms e tokens per p ns, a token is p units and the bucket
// refills exactly e units per nanosecond. Refill is a multiplication, never
// rounded, so fractional rates (0.5/s is 1 token per 2e9 ns: 2e9 units per
// token, 1 unit per ns) and fractional costs (CostUnits) do not drift, after
// any uptime. Only a cost that is not a whole number of units, a rate
// change, and a reservation's wait (rounded up to a whole ns, the refill of
// that fraction of a ns spent) round, and always against the caller. There
// is no floating point on any hot path; floats are only read by the
// constructors (and returned by TokensAt, for display).
//
// Layout of the cell: word 1 is State.T, uint64(now) ^ 1<<63; word 2 is
// State.Deficit in units, at most 2^62 (burst*Unit() <= 2^61 plus reserved
// debt), its top bit marking a cell retired by SetParamsAt.
//
// Time is int64 nanoseconds on a fixed-origin clock (package nanotime). Each
// method has an ...At twin taking now; the plain form reads the Limiter's
// clock, nanotime.Now unless WithClock gave another.
package bucket

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"golang.org/x/sys/cpu"

	"github.com/cellrate/cellrate/atomic128"
	"github.com/cellrate/cellrate/internal/backoff"
	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/nanotime"
)

// cell is one generation of a Limiter: Params and the state they govern.
// SetParams retires a cell (sets retiredBit in its Deficit, keeping the
// value) and hands its settled state to the next, so a decision always sees
// a state and the Params it was made under together.
type cell struct {
	ps    Params
	since int64                // now of the SetParams that made this cell
	next  atomic.Pointer[cell] // the successor, set once retirement begins
	_     cpu.CacheLinePad     // state's line holds nothing the reads of ps would miss on
	state atomic128.Uint64Pair
	_     cpu.CacheLinePad
}

// pending is the Deficit of a successor cell before its state is carried
// over: retired-looking (never live) and distinct from any retired live value.
const pending = retiredBit | maxDeficit | (maxDeficit - 1)

// Limiter is a token bucket that many goroutines may use at once. Every
// decision is one 128-bit load, the step, and (only when it changes the
// state) one 128-bit compare-and-swap, retried on conflict after a short
// spin. The state sits on a cache line of its own.
//
// The zero value is not usable: make a Limiter with New or NewPer. A Limiter
// must not be copied after first use.
type Limiter struct {
	cur   atomic.Pointer[cell]
	clock nanotime.Clock
}

// Option configures a Limiter.
type Option func(*Limiter)

// WithClock makes the plain (non-At) methods and Wait read clock instead of
// nanotime.Now: for example nanotime.Since(), which follows testing/synctest's
// fake time.
func WithClock(clock nanotime.Clock) Option { return func(l *Limiter) { l.clock = clock } }

// New returns a full bucket that refills rate tokens per second and holds
// at most burst; see RateParams for how the float is read and which values
// are refused.
func New(rate float64, burst int64, opts ...Option) (*Limiter, error) {
	ps, err := RateParams(rate, burst)
	if err != nil {
		return nil, err
	}
	return NewFromParams(ps, opts...), nil
}

// NewPer returns a full bucket that refills events tokens per period and
// holds at most burst.
func NewPer(events int64, period time.Duration, burst int64, opts ...Option) (*Limiter, error) {
	ps, err := NewParams(events, period, burst)
	if err != nil {
		return nil, err
	}
	return NewFromParams(ps, opts...), nil
}

// NewFromParams returns a full bucket with valid Params ps.
func NewFromParams(ps Params, opts ...Option) *Limiter {
	l := &Limiter{}
	for _, o := range opts {
		o(l)
	}
	l.cur.Store(&cell{ps: ps})
	return l
}

func (l *Limiter) now() int64 {
	if l.clock != nil {
		return l.clock()
	}
	return nanotime.Now()
}

// load returns the state of the live cell at or after c (finishing any
// retirement in progress) and that cell.
func (l *Limiter) load(c *cell) (*cell, uint64, uint64) {
	if t, d := c.state.Load(); d < retiredBit {
		return c, t, d
	}
	return l.loadRetired(c)
}

// loadRetired is load's slow path: c is retired.
func (l *Limiter) loadRetired(c *cell) (*cell, uint64, uint64) {
	for {
		c = l.finish(c)
		if t, d := c.state.Load(); d < retiredBit {
			return c, t, d
		}
	}
}

// live returns the current cell.
func (l *Limiter) live(c *cell) *cell {
	c, _, _ = l.load(c)
	return c
}

// finish completes the retirement of c, which has a successor, and returns
// the successor. Any goroutine may run it; all compute the same result.
func (l *Limiter) finish(c *cell) *cell {
	nx := c.next.Load()
	for {
		t, d := c.state.Load()
		if d >= retiredBit {
			s := convert(&c.ps, &nx.ps, State{t, d &^ retiredBit}, nx.since)
			nx.state.CompareAndSwap(0, pending, s.T, s.Deficit)
			l.cur.CompareAndSwap(c, nx)
			return nx
		}
		c.state.CompareAndSwap(t, d, t, d|retiredBit)
	}
}

// Params returns the current Params.
func (l *Limiter) Params() Params { return l.live(l.cur.Load()).ps }

// SetParamsAt makes ps the bucket's Params from now on, atomically with
// respect to every other method: the tokens held (or owed) at now, refilled
// at the old rate, carry over, rounded down to a unit of ps and capped at
// its burst. A now older than the bucket's last refill takes effect at that
// refill's time instead.
func (l *Limiter) SetParamsAt(now int64, ps Params) {
	nx := &cell{ps: ps, since: now}
	nx.state.Store(0, pending)
	for {
		c := l.live(l.cur.Load())
		won := c.next.CompareAndSwap(nil, nx)
		l.finish(c) // ours, or help another SetParams finish before retrying
		if won {
			return
		}
	}
}

// SetRate is SetRateAt with the Limiter's clock.
func (l *Limiter) SetRate(rate float64) error { return l.SetRateAt(l.now(), rate) }

// SetRateAt changes the rate to rate tokens per second from now on,
// keeping the burst (see SetParamsAt).
func (l *Limiter) SetRateAt(now int64, rate float64) error {
	old := l.Params()
	ps, err := RateParams(rate, old.Burst())
	if err != nil {
		return err
	}
	l.SetParamsAt(now, ps)
	return nil
}

// SetBurst is SetBurstAt with the Limiter's clock.
func (l *Limiter) SetBurst(burst int64) error { return l.SetBurstAt(l.now(), burst) }

// SetBurstAt changes the burst from now on, keeping the rate (see
// SetParamsAt). Tokens above a smaller burst are dropped.
func (l *Limiter) SetBurstAt(now int64, burst int64) error {
	old := l.Params()
	ps, err := params(old.e, old.p, burst)
	if err != nil {
		return err
	}
	l.SetParamsAt(now, ps)
	return nil
}

// Allow is AllowAt with the Limiter's clock.
func (l *Limiter) Allow() bool { return l.AllowAt(l.now()) }

// AllowAt reports whether one token is available at now, and takes it if so.
func (l *Limiter) AllowAt(now int64) bool {
	u := uint64(now) ^ signBit
	c := l.cur.Load()
	var spin backoff.Spin
	for ; ; spin.Wait() {
		// load, by hand: atomic128's Load inlines here, load would not.
		t, d := c.state.Load()
		if d >= retiredBit {
			c, t, d = l.loadRetired(c)
		}
		ps := &c.ps
		deff, base, nt := ps.refill(t, d, u)
		if deff+ps.p > ps.cap {
			return false
		}
		if c.state.CompareAndSwap(t, d, nt, base+ps.p) {
			return true
		}
	}
}

// AllowN is AllowNAt with the Limiter's clock.
func (l *Limiter) AllowN(n int64) (limit.Result, error) { return l.AllowNAt(l.now(), n) }

// AllowNAt takes n tokens at now if all n are available, else none.
// n < 0 returns limit.ErrNegativeCost, n > burst limit.ErrCostExceedsBurst.
func (l *Limiter) AllowNAt(now, n int64) (limit.Result, error) { return l.allowCost(now, n, 0) }

// AllowFrac is AllowFracAt with the Limiter's clock.
func (l *Limiter) AllowFrac(num, den int64) (limit.Result, error) {
	return l.AllowFracAt(l.now(), num, den)
}

// AllowFracAt takes num/den tokens at now if they are available, else
// nothing. The cost is rounded up to a unit (see Params.CostUnits).
func (l *Limiter) AllowFracAt(now, num, den int64) (limit.Result, error) {
	if den <= 0 {
		return limit.Result{RetryAfter: limit.Never}, errDenominator(den)
	}
	return l.allowCost(now, num, den)
}

// allowCost decides a cost of num/den tokens, or of num whole tokens when
// den is 0. The cost is converted to units under the Params of the cell
// the decision is made in, again if the Params change meanwhile.
func (l *Limiter) allowCost(now, num, den int64) (limit.Result, error) {
	c := l.cur.Load()
	var spin backoff.Spin
	for ; ; spin.Wait() {
		var t, d uint64
		c, t, d = l.load(c)
		var cost int64
		switch {
		case num < 0:
			return limit.Result{RetryAfter: limit.Never}, limit.ErrNegativeCost
		case den == 0 && uint64(num) > c.ps.burst:
			return limit.Result{RetryAfter: limit.Never}, limit.ErrCostExceedsBurst
		case den == 0:
			cost = num * int64(c.ps.p)
		default:
			var err error
			if cost, err = c.ps.CostUnits(num, den); err != nil {
				return limit.Result{RetryAfter: limit.Never}, err
			}
		}
		next, r := c.ps.StepUnits(State{t, d}, now, cost)
		if !r.OK || next == (State{t, d}) || c.state.CompareAndSwap(t, d, next.T, next.Deficit) {
			return r, nil
		}
	}
}

// Tokens is TokensAt with the Limiter's clock.
func (l *Limiter) Tokens() float64 { return l.TokensAt(l.now()) }

// TokensAt returns the tokens available at now, negative while reservations
// are owed. It is for display: the float rounds; decisions never use it.
func (l *Limiter) TokensAt(now int64) float64 {
	c := l.live(l.cur.Load())
	t, d := c.state.Load()
	d &^= retiredBit
	u := uint64(now) ^ signBit
	ps := &c.ps
	if u >= t {
		deff, _, _ := ps.refill(t, d, u)
		return (float64(ps.cap) - float64(deff)) / float64(ps.p)
	}
	// Stale now: the tokens at t less the refill since u, which may not fit
	// in a deficit.
	return (float64(ps.cap) - float64(d) - float64(t-u)*float64(ps.e)) / float64(ps.p)
}

// A Loan records the tokens a TakeUpToAt took, so that the unused ones
// can be given back exactly (GiveBack). The zero Loan holds nothing.
type Loan struct {
	// N is the number of whole tokens taken.
	N int64

	c    *cell
	t, d uint64 // the state the take wrote
}

// TakeUpTo is TakeUpToAt with the Limiter's clock.
func (l *Limiter) TakeUpTo(k int64) Loan { return l.TakeUpToAt(l.now(), k) }

// TakeUpToAt takes as many whole tokens as are available at now, at most k,
// and returns them as a Loan (N is 0 when k <= 0 or none is available; then
// nothing is written). It is a batch-borrow for sharded limiters: the tokens
// count as admitted at now, as N AllowAt calls at now would.
func (l *Limiter) TakeUpToAt(now, k int64) Loan {
	if k <= 0 {
		return Loan{}
	}
	u := uint64(now) ^ signBit
	c := l.cur.Load()
	var spin backoff.Spin
	for ; ; spin.Wait() {
		var t, d uint64
		c, t, d = l.load(c)
		ps := &c.ps
		deff, base, nt := ps.refill(t, d, u)
		if deff >= ps.cap {
			return Loan{}
		}
		m := min(uint64(k), (ps.cap-deff)/ps.p)
		if m == 0 {
			return Loan{}
		}
		if c.state.CompareAndSwap(t, d, nt, base+m*ps.p) {
			return Loan{N: int64(m), c: c, t: nt, d: base + m*ps.p}
		}
	}
}

// GiveBack returns up to k unused tokens of loan (at most loan.N) to the
// bucket, and returns how many units it credited (Params.Unit per token). It
// empties the loan: give back once, what is left over.
//
// Rule: a give-back credits only while the bucket is exactly as the loan
// left it, with nothing taken or refilled into the state since; it then
// makes the loan as if it had taken k tokens fewer, which keeps the bound
// with the loan counted as admitted at its take. Once anything else has
// used the bucket, the loan's tokens are spent and nothing is credited:
// with callers' times arriving out of order, crediting tokens later could
// hand out refill that a stale caller already saw. The credit does not
// depend on the time, so GiveBack takes none and reads no clock.
func (l *Limiter) GiveBack(loan *Loan, k int64) int64 {
	k = min(k, loan.N)
	c := loan.c
	loan.N = 0
	if k <= 0 || c == nil {
		return 0
	}
	units := uint64(k) * c.ps.p
	if c.state.CompareAndSwap(loan.t, loan.d, loan.t, loan.d-units) {
		return int64(units)
	}
	return 0
}

// Reservation is a cost taken from the bucket now, to be used after a wait.
// The zero Reservation is not OK and cancels to nothing.
type Reservation struct {
	// OK reports whether the cost was taken. A reservation is refused only
	// when it would run the bucket's debt beyond 2^62 units or its time to
	// act would be past the end of int64 time.
	OK bool
	// Wait is how many nanoseconds after the reservation's now the caller
	// must wait before acting; 0 when the tokens were there at once.
	Wait int64

	l    *Limiter
	c    *cell
	t, d uint64 // the state the reservation wrote
	cost uint64
	done int64 // the reservation's now plus Wait
}

// Reserve is ReserveAt with the Limiter's clock.
func (l *Limiter) Reserve(n int64) (Reservation, error) { return l.ReserveAt(l.now(), n) }

// ReserveAt takes n tokens at now whether or not they are available,
// running the bucket into debt, and returns how long to wait until they
// would have been: the caller acts at now+Wait. Later decisions see the
// debt, so the bound holds for reserved tokens counted at their act time.
// n < 0 and n > burst return an error and a Reservation that is not OK.
func (l *Limiter) ReserveAt(now, n int64) (Reservation, error) {
	c := l.cur.Load()
	u := uint64(now) ^ signBit
	var spin backoff.Spin
	for ; ; spin.Wait() {
		var t, d uint64
		c, t, d = l.load(c)
		ps := &c.ps
		if n < 0 {
			return Reservation{Wait: limit.Never}, limit.ErrNegativeCost
		}
		if uint64(n) > ps.burst {
			return Reservation{Wait: limit.Never}, limit.ErrCostExceedsBurst
		}
		cost := uint64(n) * ps.p
		deff, base, nt := ps.refill(t, d, u)
		r := Reservation{l: l, c: c}
		if deff+cost > ps.cap {
			// Charged as if admitted at the whole-ns act time: the refill in
			// the fraction of a ns between the exact time and it is spent, so
			// callers acting at now+Wait stay within the bound.
			var spare uint64
			r.Wait, spare = ps.wait(State{t, d}, u, cost)
			if r.Wait == limit.Never {
				return Reservation{Wait: limit.Never}, nil
			}
			cost += spare
		}
		r.cost = cost
		if base+cost > maxDeficit || now+r.Wait < now {
			return Reservation{Wait: limit.Never}, nil
		}
		r.OK, r.t, r.d, r.done = true, nt, base+cost, now+r.Wait
		if cost == 0 || c.state.CompareAndSwap(t, d, nt, base+cost) {
			return r, nil
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

// CancelAt gives the reservation's tokens back, and reports whether it did.
// Rule: it gives them back only if now is not after the time to act and the
// bucket has not changed since the reservation (no decision has been built
// on the debt it ran up); the bucket is then exactly as if the reservation
// had never been made, so the bound cannot break. Otherwise the tokens stay
// taken: later reservations already wait for them, and handing them to a new
// caller would let it act at the same time as those. Only the first call to
// CancelAt can give anything back.
func (r *Reservation) CancelAt(now int64) bool {
	ok := r.OK && r.cost != 0 && now <= r.done
	r.OK = false
	return ok && r.c.state.CompareAndSwap(r.t, r.d, r.t, r.d-r.cost)
}

// ErrDeadline is returned by Wait when the context's deadline comes before
// the tokens would; errors.Is(ErrDeadline, context.DeadlineExceeded) holds.
var ErrDeadline = fmt.Errorf("bucket: wait would pass the context deadline: %w", context.DeadlineExceeded)

// ErrTooMuchDebt is returned by Wait when a reservation would run the
// bucket's debt beyond 2^62 units.
var ErrTooMuchDebt = errors.New("bucket: too many tokens reserved ahead")

// Wait blocks until n tokens are available and takes them, or until ctx is
// done. It reserves at once, so waiters are served in order; if ctx ends
// first (or its deadline is sooner than the wait, in which case Wait returns
// ErrDeadline without blocking) the reservation is cancelled under
// CancelAt's rule. Its timer is stopped on every path: nothing leaks.
func (l *Limiter) Wait(ctx context.Context, n int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	now := l.now()
	r, err := l.ReserveAt(now, n)
	if err != nil {
		return err
	}
	if !r.OK {
		return ErrTooMuchDebt
	}
	if r.Wait == 0 {
		return nil
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < time.Duration(r.Wait) {
		r.CancelAt(now)
		return ErrDeadline
	}
	tm := time.NewTimer(time.Duration(r.Wait))
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		r.CancelAt(l.now())
		return ctx.Err()
	}
}

var _ limit.Limiter = (*Limiter)(nil)
