// Package bucketcore is package bucket's implementation, with what only
// the library uses besides (Params and State, loans, SetParams): package
// bucket shows users a part of it, package rate and striped use it whole.
// The doc of package bucket follows.
//
// Package bucket is a lock-free token bucket with exact fractional tokens,
// whose whole state is 128 bits. Use it when a limiter needs more than
// Allow: reservations (Reserve, Wait), a rate or burst changed while it runs
// (SetRate, SetBurst), fractional rates and costs, or tokens lent in batches
// (TakeUpTo, GiveBack). For Allow alone, package gcra is cheaper; for
// golang.org/x/time/rate's API, package rate is built on this one.
//
// A denial writes nothing. There is no floating point on any hot path: a
// token is a whole number of units and the bucket refills a whole number of
// units per nanosecond, so fractional rates (0.5 a second) and costs do not
// drift after any uptime. Time is int64 nanoseconds on a fixed-origin clock
// (package nanotime): each method has an ...At twin taking now; the plain
// form reads the Limiter's clock, nanotime.Now unless WithClock gave another.
// A parameter out of range is a *limit.ParamError.
//
// # Contract
//
// For a bucket refilling r tokens per second with burst b, the cost admitted
// with now values in any closed interval of length t is at most b + r*t,
// exactly, on every schedule: concurrent callers, stale or out-of-order now
// values, jumps of years, now anywhere in the int64 range. Reserved tokens
// count at their time to act (now + the wait), loans at their take, less what
// GiveBack returned; cancelled reservations and refunded admissions count
// only if they gave nothing back. A stale now never refills the bucket.
//
// The only roundings (a cost that is not a whole number of units, a rate
// change, a reservation's wait rounded up to a whole ns) are against the
// caller. A reservation whose time to act would pass math.MaxInt64 is
// refused; a refill that would pass it saturates at a full bucket.
//
// The state's layout and the exact arithmetic are described in the project's
// ARCHITECTURE.md.
package bucketcore

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"golang.org/x/sys/cpu"

	"github.com/cellrate/cellrate/atomic128"
	"github.com/cellrate/cellrate/internal/backoff"
	"github.com/cellrate/cellrate/internal/cell"
	"github.com/cellrate/cellrate/internal/wait"
	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/nanotime"
)

// gen is one generation of a Limiter: Params and the state they govern.
// SetParams retires a generation (sets retiredBit in its Deficit, keeping
// the value) and hands its settled state to the next, so a decision always
// sees a state and the Params it was made under together.
type gen struct {
	ps    Params
	since int64               // now of the SetParams that made this generation
	next  atomic.Pointer[gen] // the successor, set once retirement begins
	_     cpu.CacheLinePad    // state's line holds nothing the reads of ps would miss on
	state atomic128.Uint64Pair
	_     cpu.CacheLinePad
}

// pending is the Deficit of a successor generation before its state is
// carried over: retired-looking (never live) and distinct from any retired
// live value.
const pending = retiredBit | maxDeficit | (maxDeficit - 1)

// Limiter is a token bucket that many goroutines may use at once. Every
// decision is one 128-bit load, the step, and (only when it changes the
// state) one 128-bit compare-and-swap, retried on conflict after a short
// spin. The state sits on a cache line of its own.
//
// The zero Limiter has burst 0: it admits nothing, refusing every n > 0 with
// limit.ErrCostExceedsBurst (as x/time/rate's zero Limiter rejects every
// event), until SetParams gives it Params (it then starts full) and reads
// nanotime.Now; make a Limiter with New, NewRate or NewFromParams. A Limiter
// must not be copied after first use (go vet reports copies).
type Limiter struct {
	cur   atomic.Pointer[gen]
	clock nanotime.Clock
}

// Option configures a Limiter.
type Option func(*config)

type config struct {
	clock nanotime.Clock
}

// WithClock makes the plain (non-At) methods and Wait read clock instead of
// nanotime.Now: for example nanotime.Since(), which follows testing/synctest's
// fake time. A nil clock is a *limit.ParamError.
func WithClock(clock nanotime.Clock) Option { return func(c *config) { c.clock = clock } }

// New returns a full bucket that refills events tokens per period and
// holds at most burst. A parameter out of range is a *limit.ParamError
// (see NewParams).
func New(events int64, period time.Duration, burst int64, opts ...Option) (*Limiter, error) {
	ps, err := NewParams(events, period, burst)
	if err != nil {
		return nil, err
	}
	return NewFromParams(ps, opts...)
}

// NewRate returns a full bucket that refills rate tokens per second and
// holds at most burst; RateParams says how the float is read and which
// values are refused.
func NewRate(rate float64, burst int64, opts ...Option) (*Limiter, error) {
	ps, err := RateParams(rate, burst)
	if err != nil {
		return nil, err
	}
	return NewFromParams(ps, opts...)
}

// NewFromParams returns a full bucket with Params ps; the zero Params is a
// *limit.ParamError with Param "params".
func NewFromParams(ps Params, opts ...Option) (*Limiter, error) {
	l := new(Limiter)
	if err := l.Init(ps, opts...); err != nil {
		return nil, err
	}
	return l, nil
}

// Init makes l what NewFromParams returns, in place; l must not be in use.
func (l *Limiter) Init(ps Params, opts ...Option) error {
	cfg := config{clock: nanotime.Now}
	for i, o := range opts {
		if o == nil {
			return &limit.ParamError{Pkg: "bucket", Param: "option", Value: i, Reason: "a nil Option"}
		}
		o(&cfg)
	}
	if ps.p == 0 {
		return errZeroParams("bucket", ps)
	}
	if cfg.clock == nil {
		return &limit.ParamError{Pkg: "bucket", Param: "clock", Value: cfg.clock, Reason: "must not be nil"}
	}
	l.clock = cfg.clock
	l.cur.Store(&gen{ps: ps})
	return nil
}

// errs maps a step's error to a code, so that the results cell.Run128
// carries hold no pointers: with an interface in its result the generic
// runner cost twice as much in a one-run benchmark.
var errs = [...]error{nil, limit.ErrNegativeCost, limit.ErrCostExceedsBurst, errDenominator(0)}

func errCode(err error) uint8 {
	switch err {
	case nil:
		return 0
	case limit.ErrNegativeCost:
		return 1
	case limit.ErrCostExceedsBurst:
		return 2
	}
	return 3
}

// retired is the result a step returns, without writing, when the state it
// loaded is retired: its caller moves on to the successor generation and
// runs the step again there.
const retired = 0xff

// zeroGen is the zero Limiter's generation: the zero Params, which admit
// nothing, over the zero State. Nothing writes it: a step that admits
// nothing returns its state unchanged, AllowAt and Refund do not use it,
// and SetParams replaces it rather than retiring it.
var zeroGen gen

// load returns the current generation, zeroGen for the zero Limiter.
func (l *Limiter) load() *gen {
	if g := l.cur.Load(); g != nil {
		return g
	}
	return &zeroGen
}

// now reads the Limiter's clock, nanotime.Now for the zero Limiter.
func (l *Limiter) now() int64 {
	if l.clock == nil {
		return nanotime.Now()
	}
	return l.clock()
}

// live returns the live generation and its state, finishing any
// retirement in progress.
func (l *Limiter) live() (*gen, State) {
	g := l.load()
	for {
		if t, d := g.state.Load(); d < retiredBit {
			return g, State{t, d}
		}
		g = l.finish(g)
	}
}

// finish completes the retirement of g, which has a successor, and returns
// the successor. Any goroutine may run it; all compute the same result.
func (l *Limiter) finish(g *gen) *gen {
	nx := g.next.Load()
	// Retire: set retiredBit on whatever live state g holds, keeping it.
	s := cell.Run128(&g.state, func(t, d uint64) (uint64, uint64, State, bool) {
		return t, d | retiredBit, State{t, d &^ retiredBit}, d < retiredBit
	})
	s = g.ps.convert(s, nx.since, nx.ps)
	nx.state.CompareAndSwap(0, pending, s.T, s.Deficit)
	l.cur.CompareAndSwap(g, nx)
	return nx
}

// Params returns the current Params.
func (l *Limiter) Params() Params {
	g, _ := l.live()
	return g.ps
}

// SetParams is SetParamsAt with the Limiter's clock.
func (l *Limiter) SetParams(ps Params) error { return l.SetParamsAt(l.now(), ps) }

// SetParamsAt makes ps the bucket's Params from now on, atomically with
// respect to every other method: the tokens held (or owed) at now, refilled
// at the old rate, carry over, rounded down to a unit of ps and capped at
// its burst. A now not after the bucket's last refill
// takes effect 1ns after that refill instead. The zero Params is a
// *limit.ParamError.
func (l *Limiter) SetParamsAt(now int64, ps Params) error {
	if ps.p == 0 {
		return errZeroParams("bucket", ps)
	}
	return l.setAt(now, func(Params) (Params, error) { return ps, nil })
}

// setAt replaces the live Params old by f(old) from now on. A SetParams
// that wins meanwhile makes it derive them again from the winner's.
func (l *Limiter) setAt(now int64, f func(old Params) (Params, error)) error {
	for {
		g, _ := l.live()
		ps, err := f(g.ps)
		if err != nil {
			return err
		}
		if g == &zeroGen {
			// The zero Limiter starts full, as New's does.
			if l.cur.CompareAndSwap(nil, &gen{ps: ps, since: now}) {
				return nil
			}
			continue
		}
		nx := &gen{ps: ps, since: now}
		nx.state.Store(0, pending)
		won := g.next.CompareAndSwap(nil, nx)
		l.finish(g) // ours, or help another SetParams finish before retrying
		if won {
			return nil
		}
	}
}

// SetRate is SetRateAt with the Limiter's clock.
func (l *Limiter) SetRate(events int64, period time.Duration) error {
	return l.SetRateAt(l.now(), events, period)
}

// SetRateAt changes the rate to events tokens per period from now on,
// keeping the burst (see SetParamsAt). A parameter out of range, including
// a burst that no longer fits the new rate's unit, is a *limit.ParamError.
func (l *Limiter) SetRateAt(now, events int64, period time.Duration) error {
	return l.setAt(now, func(old Params) (Params, error) { return NewParams(events, period, old.Burst()) })
}

// SetBurst is SetBurstAt with the Limiter's clock.
func (l *Limiter) SetBurst(burst int64) error { return l.SetBurstAt(l.now(), burst) }

// SetBurstAt changes the burst from now on, keeping the rate (see
// SetParamsAt). Tokens above a smaller burst are dropped. A burst out of
// range is a *limit.ParamError.
func (l *Limiter) SetBurstAt(now, burst int64) error {
	return l.setAt(now, func(old Params) (Params, error) {
		if old.p == 0 {
			return Params{}, &limit.ParamError{Pkg: "bucket", Param: "burst", Value: burst,
				Reason: "the zero Limiter has no rate to keep: make one with New or NewRate"}
		}
		return params(old.e, old.p, burst)
	})
}

// Allow is AllowAt with the Limiter's clock.
func (l *Limiter) Allow() bool { return l.AllowAt(l.now()) }

// AllowAt reports whether one token is available at now, and takes it if so.
func (l *Limiter) AllowAt(now int64) bool {
	// The loop is written out rather than run by cell.Run128: with the
	// runner's indirect call to the step, admitting cost 1.2x and denying
	// 1.35x in a one-run benchmark. It runs Step's refill and admission rule
	// (refill, admits), both inlined.
	u := uint64(now) ^ signBit
	g := l.cur.Load()
	if g == nil {
		return false // the zero Limiter
	}
	var spin backoff.Spin
	for ; ; spin.Wait() {
		t, d := g.state.Load()
		if d >= retiredBit {
			g = l.finish(g)
			continue
		}
		ps := &g.ps
		deff, base, nt := ps.refill(t, d, u)
		if !ps.admits(deff, ps.p) {
			return false
		}
		if g.state.CompareAndSwap(t, d, nt, base+ps.p) {
			return true
		}
	}
}

// AllowN is AllowNAt with the Limiter's clock.
func (l *Limiter) AllowN(n int64) (limit.Result, error) { return l.AllowNAt(l.now(), n) }

// AllowNAt takes n tokens at now if all n are available, else none.
// n < 0 returns limit.ErrNegativeCost, n > burst limit.ErrCostExceedsBurst.
//
// Its loop is written out for the same reason as AllowAt's, around the same
// Params.Step.
func (l *Limiter) AllowNAt(now, n int64) (limit.Result, error) {
	g := l.load()
	var spin backoff.Spin
	for ; ; spin.Wait() {
		t, d := g.state.Load()
		if d >= retiredBit {
			g = l.finish(g)
			continue
		}
		s := State{t, d}
		next, r, err := g.ps.Step(s, now, n)
		if next == s || g.state.CompareAndSwap(t, d, next.T, next.Deficit) {
			return r, err
		}
	}
}

// TakeAt is AllowNAt that also returns, when it admits n > 0, the Receipt
// Refund needs to give the tokens back (limit.Member). The Receipt's Before
// and After are the cell's words (State.T, State.Deficit) just before and
// just after the admission.
//
// Its loop is AllowNAt's, around the same Params.Step.
func (l *Limiter) TakeAt(now, n int64) (limit.Result, limit.Receipt, error) {
	g := l.load()
	var spin backoff.Spin
	for ; ; spin.Wait() {
		t, d := g.state.Load()
		if d >= retiredBit {
			g = l.finish(g)
			continue
		}
		s := State{t, d}
		next, r, err := g.ps.Step(s, now, n)
		if next == s {
			return r, limit.Receipt{}, err
		}
		if g.state.CompareAndSwap(t, d, next.T, next.Deficit) {
			return r, limit.Receipt{At: now, N: n, Before: [2]uint64{t, d}, After: [2]uint64{next.T, next.Deficit}}, nil
		}
	}
}

// Refund gives back the tokens of the admission that returned rc (see
// limit.Member): exactly, restoring the state before it,
// when the bucket is still exactly as that admission left it (no other
// decision since, or all since refunded); otherwise it gives back nothing,
// since later decisions were made with those tokens taken. A SetParams in
// between makes it give back nothing: every state under new Params is later
// than the admission's, so never equal to it. At the end of
// time (an admission that left T at math.MaxInt64) it gives back nothing.
func (l *Limiter) Refund(rc limit.Receipt) {
	if rc.N == 0 {
		return
	}
	before, after := State{rc.Before[0], rc.Before[1]}, State{rc.After[0], rc.After[1]}
	// Only the current generation can still hold after: a retired state
	// has retiredBit set, and every state of a later generation is later
	// (Params.convert). So a SetParams in progress or done means nothing
	// to give back, and Refund need not finish it.
	g := l.cur.Load()
	if g == nil {
		return
	}
	cell.Run128(&g.state, func(t, d uint64) (uint64, uint64, struct{}, bool) {
		next, ok := g.ps.undo(State{t, d}, before, after)
		return next.T, next.Deficit, struct{}{}, ok
	})
}

// AllowFrac is AllowFracAt with the Limiter's clock.
func (l *Limiter) AllowFrac(num, den int64) (limit.Result, error) {
	return l.AllowFracAt(l.now(), num, den)
}

// AllowFracAt takes num/den tokens at now if they are available, else
// nothing. The cost is rounded up to a whole unit (1/Params.Unit of a
// token), under the Params the decision is made in.
func (l *Limiter) AllowFracAt(now, num, den int64) (limit.Result, error) {
	if den <= 0 {
		return limit.Result{RetryAfter: limit.Never}, errDenominator(den)
	}
	type res struct {
		r   limit.Result
		err uint8
	}
	for g := l.load(); ; g = l.finish(g) {
		out := cell.Run128(&g.state, func(t, d uint64) (uint64, uint64, res, bool) {
			if d >= retiredBit {
				return t, d, res{err: retired}, false
			}
			s := State{t, d}
			cost, err := g.ps.costUnits(num, den)
			if err != nil {
				return t, d, res{limit.Result{RetryAfter: limit.Never}, errCode(err)}, false
			}
			next, r := g.ps.stepUnits(s, now, cost)
			return next.T, next.Deficit, res{r, 0}, next != s
		})
		if out.err != retired {
			return out.r, errs[out.err]
		}
	}
}

// Tokens is TokensAt with the Limiter's clock.
func (l *Limiter) Tokens() float64 { return l.TokensAt(l.now()) }

// TokensAt returns the tokens available at now, negative while reservations
// are owed. It is for display: the float rounds; decisions never use it.
func (l *Limiter) TokensAt(now int64) float64 {
	g, s := l.live()
	return g.ps.Tokens(s, now)
}

// Remaining is RemainingAt with the Limiter's clock.
func (l *Limiter) Remaining() int64 { return l.RemainingAt(l.now()) }

// RemainingAt returns the whole tokens available at now: the most that
// AllowNAt at now would admit if nothing else happened first.
func (l *Limiter) RemainingAt(now int64) int64 {
	g, s := l.live()
	return g.ps.Remaining(s, now)
}

// A Loan records the tokens a TakeUpToAt took, so that the unused ones
// can be given back exactly (GiveBack). The zero Loan holds nothing.
type Loan struct {
	// N is the number of whole tokens taken.
	N int64

	g     *gen
	wrote State // the state the take wrote
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
	type took struct {
		n     int64 // tokens, or retired
		wrote State
	}
	for g := l.load(); ; g = l.finish(g) {
		out := cell.Run128(&g.state, func(t, d uint64) (uint64, uint64, took, bool) {
			if d >= retiredBit {
				return t, d, took{n: retired}, false
			}
			next, m := g.ps.TakeUpTo(State{t, d}, now, k)
			return next.T, next.Deficit, took{m, next}, m != 0
		})
		switch out.n {
		case retired:
			continue
		case 0:
			return Loan{}
		}
		return Loan{N: out.n, g: g, wrote: out.wrote}
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
	g, wrote := loan.g, loan.wrote
	loan.N = 0
	if k <= 0 || g == nil {
		return 0
	}
	// A retired generation's state has retiredBit set: never the loan's.
	return cell.Run128(&g.state, func(t, d uint64) (uint64, uint64, int64, bool) {
		next, units := g.ps.giveBackLoan(State{t, d}, wrote, k)
		return next.T, next.Deficit, units, units != 0
	})
}

// Reservation is a cost taken from the bucket now, to be used after a wait.
// The zero Reservation is not OK and cancels to nothing.
type Reservation struct {
	// OK reports whether the cost was taken. A reservation is refused only
	// when it would run the bucket's debt beyond 2^62 units or its time to
	// act would be past the end of int64 time, math.MaxInt64.
	OK bool
	// Wait is how long after the reservation's now the caller must wait
	// before acting; 0 when the tokens were there at once.
	Wait time.Duration

	l     *Limiter
	g     *gen
	wrote State  // the state the reservation wrote
	cost  uint64 // units charged
	done  int64  // the reservation's now plus Wait
}

// Reserve is ReserveN(1).
func (l *Limiter) Reserve() (Reservation, error) { return l.ReserveNAt(l.now(), 1) }

// ReserveN is ReserveNAt with the Limiter's clock.
func (l *Limiter) ReserveN(n int64) (Reservation, error) { return l.ReserveNAt(l.now(), n) }

// ReserveAt is ReserveNAt(now, 1).
func (l *Limiter) ReserveAt(now int64) (Reservation, error) { return l.ReserveNAt(now, 1) }

// ReserveNAt takes n tokens at now whether or not they are available,
// running the bucket into debt, and returns how long to wait until they
// would have been: the caller acts at now+Wait. Later decisions see the
// debt, so the bound holds for reserved tokens counted at their act time.
// n < 0 and n > burst return an error and a Reservation that is not OK.
func (l *Limiter) ReserveNAt(now, n int64) (Reservation, error) {
	type res struct {
		r     reserved
		wrote State
		err   uint8
	}
	for g := l.load(); ; g = l.finish(g) {
		out := cell.Run128(&g.state, func(t, d uint64) (uint64, uint64, res, bool) {
			if d >= retiredBit {
				return t, d, res{err: retired}, false
			}
			s := State{t, d}
			next, r, err := g.ps.reserve(s, now, n)
			return next.T, next.Deficit, res{r, next, errCode(err)}, next != s
		})
		switch {
		case out.err == retired:
			continue
		case !out.r.OK:
			return Reservation{Wait: out.r.Wait}, errs[out.err]
		}
		return Reservation{OK: true, Wait: out.r.Wait, l: l, g: g, wrote: out.wrote, cost: uint64(out.r.Units), done: now + int64(out.r.Wait)}, nil
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
	if !ok {
		return false
	}
	g, wrote, cost := r.g, r.wrote, r.cost
	return cell.Run128(&g.state, func(t, d uint64) (uint64, uint64, bool, bool) {
		next, ok := giveBack(State{t, d}, wrote, cost)
		return next.T, next.Deficit, ok, ok
	})
}

// Held is what a reservation needs to be cancelled later, in 32 bytes: the
// generation it was made in, the state it wrote and the units it charged.
// A Held with Units but no generation stands for tokens held elsewhere
// (package rate keeps a zero limit's tokens in a pool of its own there).
type Held struct {
	g     *gen
	wrote State
	Units uint64
}

// Held returns what r needs to be cancelled; the zero Held for a
// reservation that took nothing.
func (r *Reservation) Held() Held {
	if !r.OK || r.cost == 0 {
		return Held{}
	}
	return Held{g: r.g, wrote: r.wrote, Units: r.cost}
}

// Live reports whether h holds a bucket's units that Cancel may give back.
func (h *Held) Live() bool { return h.g != nil }

// Cancel gives h's units back under Reservation.CancelAt's rule, without
// its time check (the caller has made it), and reports whether it did.
// Only the first call can give anything back.
func (h *Held) Cancel() bool {
	g, wrote, cost := h.g, h.wrote, h.Units
	h.g = nil
	if g == nil || cost == 0 {
		return false
	}
	return cell.Run128(&g.state, func(t, d uint64) (uint64, uint64, bool, bool) {
		next, ok := giveBack(State{t, d}, wrote, cost)
		return next.T, next.Deficit, ok, ok
	})
}

// ErrDeadline is returned by Wait when the context's deadline comes before
// the tokens would; errors.Is(ErrDeadline, context.DeadlineExceeded) holds.
var ErrDeadline = fmt.Errorf("bucket: wait would pass the context deadline: %w", context.DeadlineExceeded)

// ErrTooMuchDebt is returned by Wait when a reservation would run the
// bucket's debt beyond 2^62 units, or its time to act would pass the end of
// int64 time.
var ErrTooMuchDebt = errors.New("bucket: too many tokens reserved ahead")

// Wait is WaitN(ctx, 1).
func (l *Limiter) Wait(ctx context.Context) error { return l.WaitN(ctx, 1) }

// WaitN blocks until n tokens are available and takes them, or until ctx is
// done. It reserves at once, so waiters are served in order; if ctx ends
// first (or its deadline is sooner than the wait, in which case WaitN returns
// ErrDeadline without blocking) the reservation is cancelled under
// CancelAt's rule. Its timer is stopped on every path: nothing leaks.
func (l *Limiter) WaitN(ctx context.Context, n int64) error {
	var r Reservation
	return wait.For(ctx, l.now, func(now int64) (int64, bool, error) {
		var err error
		r, err = l.ReserveNAt(now, n)
		return int64(r.Wait), r.OK, err
	}, func(now int64) { r.CancelAt(now) }, ErrTooMuchDebt, ErrDeadline)
}

var _ limit.Member = (*Limiter)(nil)
