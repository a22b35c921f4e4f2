package bucket

import (
	"context"
	"errors"
	"time"

	"github.com/cellrate/cellrate/internal/bucketcore"
	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/nanotime"
)

// Limiter is a token bucket that many goroutines may use at once. Every
// decision is one 128-bit load, the step, and (only when it changes the
// state) one 128-bit compare-and-swap, retried on conflict after a short
// spin. The state sits on a cache line of its own.
//
// The zero Limiter has burst 0: it admits nothing, refusing every n > 0 with
// limit.ErrCostExceedsBurst (as x/time/rate's zero Limiter rejects every
// event), and SetRate and SetBurst refuse it with a *limit.ParamError; make a
// Limiter with New or NewRate. A Limiter must not be copied after first use
// (go vet reports copies).
type Limiter struct {
	_ noCopy
	l bucketcore.Limiter
}

// noCopy makes go vet's copylocks check report copies under the user's
// type, not the internal one it wraps.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}

var _ limit.Member = (*Limiter)(nil)

// Option configures a Limiter.
type Option func(*config)

type config struct {
	clock    nanotime.Clock
	setClock bool
}

// WithClock makes the plain (non-At) methods and Wait read clock instead of
// nanotime.Now: for example nanotime.Since(), which follows testing/synctest's
// fake time. A nil clock is a *limit.ParamError.
func WithClock(clock nanotime.Clock) Option {
	return func(c *config) { c.clock, c.setClock = clock, true }
}

// New returns a full bucket that refills events tokens per period and holds
// at most burst. A parameter out of range is a *limit.ParamError: events,
// period and burst must be at least 1, and a full bucket must fit in 2^61
// units (a unit is defined at AllowFracAt; the error's Max is the largest
// burst that fits the rate).
func New(events int64, period time.Duration, burst int64, opts ...Option) (*Limiter, error) {
	ps, err := bucketcore.NewParams(events, period, burst)
	if err != nil {
		return nil, err
	}
	return fromParams(ps, opts)
}

// NewRate returns a full bucket that refills rate tokens per second and
// holds at most burst. The float is read as the fraction num/den nearest to
// it with den <= 2^32 and within 2^-50 of it relatively (0.5 and 1.0/3
// become 1/2 and 1/3 exactly); a rate that is not finite and positive, has
// no such fraction, or is out of New's range is a *limit.ParamError.
func NewRate(rate float64, burst int64, opts ...Option) (*Limiter, error) {
	ps, err := bucketcore.RateParams(rate, burst)
	if err != nil {
		return nil, err
	}
	return fromParams(ps, opts)
}

// fromParams returns a full Limiter with Params ps and opts.
func fromParams(ps bucketcore.Params, opts []Option) (*Limiter, error) {
	var c config
	for i, o := range opts {
		if o == nil {
			return nil, &limit.ParamError{Pkg: "bucket", Param: "option", Value: i, Reason: "a nil Option"}
		}
		o(&c)
	}
	var o []bucketcore.Option
	if c.setClock {
		o = append(o, bucketcore.WithClock(c.clock))
	}
	l := new(Limiter)
	if err := l.l.Init(ps, o...); err != nil {
		return nil, err
	}
	return l, nil
}

// SetRate is SetRateAt with the Limiter's clock.
func (l *Limiter) SetRate(events int64, period time.Duration) error {
	return l.l.SetRate(events, period)
}

// SetRateAt changes the rate to events tokens per period from now on,
// keeping the burst, atomically with respect to every other method: the
// tokens held (or owed) at now, refilled at the old rate, carry over,
// rounded down to a unit of the new rate and capped at the burst. A now not
// after the bucket's last refill takes effect 1ns after that refill
// instead. A parameter out of range, including a burst that no longer fits
// the new rate's unit, is a *limit.ParamError.
func (l *Limiter) SetRateAt(now, events int64, period time.Duration) error {
	return l.l.SetRateAt(now, events, period)
}

// SetBurst is SetBurstAt with the Limiter's clock.
func (l *Limiter) SetBurst(burst int64) error { return l.l.SetBurst(burst) }

// SetBurstAt changes the burst from now on, keeping the rate, as SetRateAt
// changes the rate. Tokens above a smaller burst are dropped. A burst out of
// range is a *limit.ParamError.
func (l *Limiter) SetBurstAt(now, burst int64) error { return l.l.SetBurstAt(now, burst) }

// Allow is AllowAt with the Limiter's clock.
func (l *Limiter) Allow() bool { return l.l.Allow() }

// AllowAt reports whether one token is available at now, and takes it if so.
func (l *Limiter) AllowAt(now int64) bool { return l.l.AllowAt(now) }

// AllowN is AllowNAt with the Limiter's clock.
func (l *Limiter) AllowN(n int64) (limit.Result, error) { return l.l.AllowN(n) }

// AllowNAt takes n tokens at now if all n are available, else none.
// n < 0 returns limit.ErrNegativeCost, n > burst limit.ErrCostExceedsBurst;
// n == 0 takes nothing and reports the whole tokens left.
func (l *Limiter) AllowNAt(now, n int64) (limit.Result, error) { return l.l.AllowNAt(now, n) }

// TakeAt is AllowNAt that also returns, when it admits n > 0, the Receipt
// Refund needs to give the tokens back (limit.Member).
func (l *Limiter) TakeAt(now, n int64) (limit.Result, limit.Receipt, error) {
	return l.l.TakeAt(now, n)
}

// Refund gives back the tokens of the admission that returned rc (see
// limit.Member): exactly, restoring the state before it, when the bucket is
// still exactly as that admission left it (no other decision since, or all
// since refunded); otherwise it gives back nothing, since later decisions
// were made with those tokens taken. A rate or burst change in between
// makes it give back nothing.
func (l *Limiter) Refund(rc limit.Receipt) { l.l.Refund(rc) }

// AllowFrac is AllowFracAt with the Limiter's clock.
func (l *Limiter) AllowFrac(num, den int64) (limit.Result, error) { return l.l.AllowFrac(num, den) }

// AllowFracAt takes num/den tokens at now if they are available, else
// nothing. The cost is rounded up to a whole unit: with the rate in lowest
// terms as e tokens per p ns, a token is p units, so the cost is exact
// whenever den divides num*p (any den dividing the period in ns, for
// example). A den below 1 is a *limit.ParamError; num < 0 is
// limit.ErrNegativeCost.
func (l *Limiter) AllowFracAt(now, num, den int64) (limit.Result, error) {
	return l.l.AllowFracAt(now, num, den)
}

// Tokens is TokensAt with the Limiter's clock.
func (l *Limiter) Tokens() float64 { return l.l.Tokens() }

// TokensAt returns the tokens available at now, negative while reservations
// are owed. It is for display: the float rounds; decisions never use it.
func (l *Limiter) TokensAt(now int64) float64 { return l.l.TokensAt(now) }

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

	r bucketcore.Reservation
}

// Reserve is ReserveN(1).
func (l *Limiter) Reserve() (Reservation, error) { return l.ReserveN(1) }

// ReserveN is ReserveNAt with the Limiter's clock.
func (l *Limiter) ReserveN(n int64) (Reservation, error) {
	r, err := l.l.ReserveN(n)
	return Reservation{OK: r.OK, Wait: r.Wait, r: r}, err
}

// ReserveNAt takes n tokens at now whether or not they are available,
// running the bucket into debt, and returns how long to wait until they
// would have been: the caller acts at now+Wait. Later decisions see the
// debt, so the bound holds for reserved tokens counted at their act time.
// n < 0 and n > burst return AllowNAt's errors and a Reservation that is not
// OK.
func (l *Limiter) ReserveNAt(now, n int64) (Reservation, error) {
	r, err := l.l.ReserveNAt(now, n)
	return Reservation{OK: r.OK, Wait: r.Wait, r: r}, err
}

// Cancel is CancelAt with the Limiter's clock.
func (r *Reservation) Cancel() bool {
	r.OK = false
	return r.r.Cancel()
}

// CancelAt gives the reservation's tokens back, and reports whether it did.
// Rule: it gives them back only if now is not after the time to act and the
// bucket has not changed since the reservation (no decision has been built
// on the debt it ran up); the bucket is then exactly as if the reservation
// had never been made, so the bound cannot break. Otherwise the tokens stay
// taken: later reservations already wait for them, and handing them to a new
// caller would let it act at the same time as those. Only the first call to
// Cancel or CancelAt can give anything back. A copy of a Reservation is
// the same reservation: cancel it through one copy only, since a second
// copy's cancel after the same tokens were reserved again at the same
// instant would give back that later reservation's tokens.
func (r *Reservation) CancelAt(now int64) bool {
	r.OK = false
	return r.r.CancelAt(now)
}

// ErrTooMuchDebt is returned by Wait when a reservation would run the
// bucket's debt beyond 2^62 units, or its time to act would pass the end of
// int64 time.
var ErrTooMuchDebt = errors.New("bucket: too many tokens reserved ahead")

// Wait is WaitN(ctx, 1).
func (l *Limiter) Wait(ctx context.Context) error { return l.WaitN(ctx, 1) }

// WaitN blocks until n tokens are available and takes them, or until ctx is
// done. It reserves at once, so waiters are served in order; if ctx ends
// first the reservation is cancelled under CancelAt's rule. A deadline
// sooner than the wait returns at once, with an error for which
// errors.Is(err, context.DeadlineExceeded) holds. Its timer is stopped on
// every path: nothing leaks.
func (l *Limiter) WaitN(ctx context.Context, n int64) error {
	err := l.l.WaitN(ctx, n)
	if err == bucketcore.ErrTooMuchDebt {
		return ErrTooMuchDebt
	}
	return err
}
