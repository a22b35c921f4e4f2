package bucketcore

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"time"

	"github.com/cellrate/cellrate/internal/intmath"
	"github.com/cellrate/cellrate/internal/ratio"
	"github.com/cellrate/cellrate/limit"
)

// signBit maps int64 time onto uint64 in the same order: a State's T is
// uint64(now) ^ signBit, so math.MinInt64 is 0.
const signBit = 1 << 63

const (
	maxCap     = 1 << 61 // burst*unit: the tokens a full bucket holds, in units
	maxDeficit = 1 << 62 // deficit a reservation may run up to (cap plus debt)
	retiredBit = 1 << 63 // set in Deficit once a Limiter's cell is retired
)

// The range of rates RateParams reads: the fraction it finds must have a
// numerator below 2^62 and a denominator below 2^32.
var (
	minRate = math.Nextafter(0x1p-32, math.Inf(1))
	maxRate = math.Nextafter(0x1p62, 0)
)

// Params is the rate and burst of a bucket in the integer form the steps
// use. It is immutable. The zero Params has burst 0: its steps admit
// nothing, refusing every n > 0 with limit.ErrCostExceedsBurst; make Params
// with NewParams or RateParams.
//
// The bucket refills events tokens per period. With events/period in lowest
// terms e/p (per in ns), one token is p units and the bucket refills exactly
// e units per nanosecond: refill is one multiplication, never rounded.
type Params struct {
	e     uint64 // units refilled per ns
	p     uint64 // units per token
	burst uint64 // tokens
	cap   uint64 // burst*p
}

// NewParams returns the Params of a bucket that refills events tokens per
// period and holds at most burst tokens. A parameter out of range is a
// *limit.ParamError: events and period must be at least 1, and a full
// bucket, burst*Unit() units, must fit in 2^61 (its Max says the largest
// burst that fits the rate).
func NewParams(events int64, period time.Duration, burst int64) (Params, error) {
	switch {
	case events < 1:
		return Params{}, &limit.ParamError{Pkg: "bucket", Param: "events", Value: events, Min: int64(1)}
	case period < 1:
		return Params{}, &limit.ParamError{Pkg: "bucket", Param: "period", Value: period, Min: time.Duration(1)}
	}
	return params(uint64(events), uint64(period), burst)
}

// RateParams returns the Params of a bucket that refills rate tokens per
// second and holds at most burst tokens. The float is read as the last
// convergent num/den of its continued fraction with den < 2^32, stopping
// early at the first within 2^-50 of it relatively (0.5, 1e-3 and 1.0/3
// become 1/2, 1/1000 and 1/3 exactly); use NewParams to give a rate as an
// exact fraction. A rate that is not finite, or outside
// (2^-32, 2^62), is a *limit.ParamError with Param "rate"; burst is
// checked as by NewParams.
func RateParams(rate float64, burst int64) (Params, error) {
	num, den, ok := ratio.Fraction(rate)
	if !ok {
		e := &limit.ParamError{Pkg: "bucket", Param: "rate", Value: rate, Min: minRate, Max: maxRate}
		if math.IsNaN(rate) || math.IsInf(rate, 0) {
			e.Reason = "must be a finite number of tokens per second"
		}
		return Params{}, e
	}
	return params(num, den*uint64(time.Second), burst)
}

func params(events, period uint64, burst int64) (Params, error) {
	g := intmath.GCD(events, period)
	e, p := events/g, period/g
	if burst < 1 || uint64(burst) > maxCap/p {
		e := &limit.ParamError{Pkg: "bucket", Param: "burst", Value: burst, Min: int64(1), Max: int64(maxCap / p)}
		if burst >= 1 {
			e.Reason = fmt.Sprintf("a token is %d units at this rate and a full bucket must fit in 2^61 units", p)
		}
		return Params{}, e
	}
	return Params{e: e, p: p, burst: uint64(burst), cap: uint64(burst) * p}, nil
}

// errZeroParams is what constructors and setters return for the zero Params.
func errZeroParams(pkg string, ps Params) error {
	return &limit.ParamError{Pkg: pkg, Param: "params", Value: ps, Reason: "the zero Params: make them with NewParams or RateParams"}
}

// Burst returns the most tokens the bucket holds.
func (ps Params) Burst() int64 { return int64(ps.burst) }

// Unit returns the number of units in one token: the fixed-point scale of a
// State's Deficit.
func (ps Params) Unit() int64 { return int64(ps.p) }

// Rate returns the refill rate as events tokens per period, in lowest terms:
// events is also the units the bucket refills per nanosecond.
func (ps Params) Rate() (events int64, period time.Duration) {
	return int64(ps.e), time.Duration(ps.p)
}

// costUnits converts a cost of num/den tokens to units, rounding up to a
// whole unit (exact whenever den divides num*Unit(): for example any den
// dividing the period in nanoseconds). It returns ErrNegativeCost or
// ErrCostExceedsBurst for a cost no bucket of these Params can admit, and a
// *limit.ParamError for den < 1.
func (ps Params) costUnits(num, den int64) (int64, error) {
	if den <= 0 {
		return 0, errDenominator(den)
	}
	switch {
	case num < 0:
		return 0, limit.ErrNegativeCost
	case num > 0 && ps.p == 0:
		return 0, limit.ErrCostExceedsBurst // the zero Params hold nothing
	}
	hi, lo := bits.Mul64(uint64(num), ps.p)
	if hi >= uint64(den) {
		return 0, limit.ErrCostExceedsBurst
	}
	q, r := bits.Div64(hi, lo, uint64(den))
	if r != 0 {
		q++
	}
	if q > ps.cap {
		return 0, limit.ErrCostExceedsBurst
	}
	return int64(q), nil
}

func errDenominator(den int64) error {
	return &limit.ParamError{Pkg: "bucket", Param: "den", Value: den, Min: int64(1)}
}

// State is a bucket's 128-bit state: T is the time of the last refill as
// uint64(now) ^ 1<<63 (so the unsigned order is int64 time's order) and
// Deficit is how many units the bucket lacks of full at T. The zero State is
// a full bucket at any now. A Deficit above the capacity is debt run up by
// reservations.
//
// The steps below are the bucket's decisions as pure functions of a State:
// a Limiter runs them on its cell, and anyone may run them on a State kept
// elsewhere. Each returns the state to store; a decision that changes
// nothing returns its input, so a store need not be written then.
type State struct {
	T       uint64
	Deficit uint64
}

// refill returns the deficit at u (saturating at 2^63), and the state to
// build the next one on: at u when u is not before T, else T itself, since a
// stale now must neither refill nor move T back.
func (ps Params) refill(t, d, u uint64) (deff, base, nt uint64) {
	if u >= t {
		hi, lo := bits.Mul64(u-t, ps.e)
		if hi != 0 || lo >= d {
			return 0, 0, u
		}
		return d - lo, d - lo, u
	}
	// Stale now: the bucket had less at u than at t, by the refill between.
	hi, lo := bits.Mul64(t-u, ps.e)
	if hi != 0 || lo >= retiredBit-d {
		return retiredBit, d, t
	}
	return d + lo, d, t
}

// admits is the admission rule every taking decision shares: a cost of c
// units, c in [0, cap], is admitted when the deficit at now (refill's
// deff) plus c is at most the capacity; the state is then refill's base
// plus c at refill's time (a stale now refills nothing). deff+c cannot
// wrap: deff <= 2^63 and c <= 2^61. The rule is its own function, apart
// from refill, so that both inline into AllowAt's loop.
func (ps Params) admits(deff, c uint64) bool { return deff+c <= ps.cap }

// Step is the bucket's admission as a pure function: given state s, now and
// a cost of n whole tokens, it returns the state to store and the Result. A
// denial, and a cost of 0, return s unchanged.
//
// n < 0 returns limit.ErrNegativeCost and n > burst limit.ErrCostExceedsBurst,
// each with a Result that is not OK.
func (ps Params) Step(s State, now, n int64) (State, limit.Result, error) {
	if uint64(n) > ps.burst { // a negative n too, as a uint64
		return s, limit.Result{RetryAfter: limit.Never}, costErr(n)
	}
	next, r := ps.stepUnits(s, now, int64(uint64(n)*ps.p))
	return next, r, nil
}

// costErr is the error for a cost of n whole tokens outside [0, burst].
func costErr(n int64) error {
	if n < 0 {
		return limit.ErrNegativeCost
	}
	return limit.ErrCostExceedsBurst
}

// stepUnits is Step for a cost in units (see Unit and costUnits), which
// must be in [0, Burst()*Unit()].
func (ps Params) stepUnits(s State, now, cost int64) (State, limit.Result) {
	c, u := uint64(cost), uint64(now)^signBit
	deff, base, nt := ps.refill(s.T, s.Deficit, u)
	if !ps.admits(deff, c) {
		w, _ := ps.wait(s, u, c)
		return s, limit.Result{Remaining: ps.remaining(deff), RetryAfter: time.Duration(w)}
	}
	if c == 0 {
		return s, limit.Result{OK: true, Remaining: ps.remaining(deff)}
	}
	return State{nt, base + c}, limit.Result{OK: true, Remaining: ps.remaining(deff + c)}
}

// TakeUpTo is the batch-borrow as a pure function: it takes as many whole
// tokens as state s holds at now, at most k, and returns the state to store
// and how many it took. It takes nothing, and returns s, when k <= 0 or not
// a whole token is there. The tokens count as admitted at now, as that many
// Steps at now would.
func (ps Params) TakeUpTo(s State, now, k int64) (State, int64) {
	if k <= 0 {
		return s, 0
	}
	deff, base, nt := ps.refill(s.T, s.Deficit, uint64(now)^signBit)
	// m*p <= cap - deff: admits holds.
	m := min(uint64(k), uint64(ps.remaining(deff)))
	if m == 0 {
		return s, 0
	}
	return State{nt, base + m*ps.p}, int64(m)
}

// giveBackLoan is the give-back of a loan as a pure function: wrote is the
// state the loan's TakeUpTo returned, s the state now. If s is exactly
// wrote (nothing taken or refilled into it since), it returns s with k
// tokens credited and the units credited (k*Unit()); otherwise, or for k
// outside [1, burst] or more than wrote holds taken, s and 0. Limiter.GiveBack
// says why this rule keeps the bound.
func (ps Params) giveBackLoan(s, wrote State, k int64) (State, int64) {
	if k < 1 || uint64(k) > ps.burst {
		return s, 0
	}
	next, ok := giveBack(s, wrote, uint64(k)*ps.p)
	if !ok {
		return s, 0
	}
	return next, k * int64(ps.p)
}

// giveBack credits units to s if s is exactly the state wrote.
func giveBack(s, wrote State, units uint64) (State, bool) {
	if s != wrote || units > s.Deficit {
		return s, false
	}
	return State{s.T, s.Deficit - units}, true
}

// undo is Limiter.Refund as a pure function: given the states before and
// after an admission (from its Receipt) and the state s now, it returns
// before if s is still exactly after: the bucket as if the admission had
// never happened. Otherwise, and at the end of time (after's T is
// math.MaxInt64, where Convert cannot move T on), it returns s and false:
// later decisions were made with the admission's tokens taken, and the state
// cannot tell how much of them the bucket would have refilled anyway while
// full.
func (ps Params) undo(s, before, after State) (State, bool) {
	if s != after || after.T == math.MaxUint64 {
		return s, false
	}
	return before, true
}

// reserved is the outcome of Params.reserve.
type reserved struct {
	// OK reports whether the cost was taken (see Reservation.OK).
	OK bool
	// Wait is how long after now the caller must wait before acting; 0
	// when the tokens were there at once, limit.Never when not OK.
	Wait time.Duration
	// Units is what was charged: n*Unit(), plus, when Wait > 0, the refill
	// in the fraction of a nanosecond that Wait rounds up. A cancel gives
	// back exactly this.
	Units int64
}

// reserve is Limiter.ReserveNAt as a pure function: it takes n tokens at now whether
// or not they are there, running s into debt, and says how long the caller
// must wait before acting. Not OK (s unchanged, Wait limit.Never) when the
// debt would pass 2^62 units or the time to act, now+Wait, would be past
// math.MaxInt64: the end-of-time rule. n < 0 and n > burst return
// limit.ErrNegativeCost and limit.ErrCostExceedsBurst.
func (ps Params) reserve(s State, now, n int64) (State, reserved, error) {
	refused := reserved{Wait: limit.Never}
	if n < 0 {
		return s, refused, limit.ErrNegativeCost
	}
	if uint64(n) > ps.burst {
		return s, refused, limit.ErrCostExceedsBurst
	}
	u := uint64(now) ^ signBit
	cost := uint64(n) * ps.p
	deff, base, nt := ps.refill(s.T, s.Deficit, u)
	var w int64
	if !ps.admits(deff, cost) {
		// Charged as if admitted at the whole-ns act time: the refill in
		// the fraction of a ns between the exact time and it is spent, so
		// callers acting at now+Wait stay within the bound.
		var spare uint64
		w, spare = ps.wait(s, u, cost)
		if w == int64(limit.Never) {
			return s, refused, nil
		}
		cost += spare
	}
	// base <= 2^62 and cost < 2^61 + e <= 2^61 + 2^63: the sum cannot wrap.
	// now+w wraps exactly when the act time is past math.MaxInt64 (w >= 0).
	if base+cost > maxDeficit || now+w < now {
		return s, refused, nil
	}
	r := reserved{OK: true, Wait: time.Duration(w), Units: int64(cost)}
	if cost == 0 {
		return s, r, nil
	}
	return State{nt, base + cost}, r, nil
}

// convert is SetParams as a pure function: it carries state s of ps into
// Params to, settled at now: refilled at ps's rate up to now, then the same
// number of tokens, rounded down to a unit of to and capped at its burst;
// debt carries over up to 2^62 units. The new state's T is later than s's:
// now, or, when now is not after T (stale), T+1ns with no refill for that
// nanosecond (against the caller), so that every state under the new Params
// is later than every state under the old (Limiter.Refund relies on it).
// Only at the end of time, T = math.MaxInt64, does T stay.
func (ps Params) convert(s State, now int64, to Params) State {
	_, base, nt := ps.refill(s.T, s.Deficit, uint64(now)^signBit)
	if nt == s.T && nt != math.MaxUint64 {
		nt++
	}
	// tokens = (cap - deficit)/p, possibly negative (debt).
	tok := new(big.Int).Sub(new(big.Int).SetUint64(ps.cap), new(big.Int).SetUint64(base))
	tok.Mul(tok, new(big.Int).SetUint64(to.p))
	m := new(big.Int)
	tok.DivMod(tok, new(big.Int).SetUint64(ps.p), m) // floor
	d := new(big.Int).Sub(new(big.Int).SetUint64(to.cap), tok)
	switch {
	case d.Sign() < 0:
		d.SetInt64(0)
	case d.Cmp(big.NewInt(maxDeficit)) > 0:
		d.SetInt64(maxDeficit)
	}
	return State{nt, d.Uint64()}
}

// Remaining returns the whole tokens state s holds at now: the most a Step
// at now would admit.
func (ps Params) Remaining(s State, now int64) int64 {
	deff, _, _ := ps.refill(s.T, s.Deficit, uint64(now)^signBit)
	return ps.remaining(deff)
}

// remaining is the whole tokens held at a deficit of d.
func (ps Params) remaining(d uint64) int64 {
	if d >= ps.cap {
		return 0
	}
	return int64((ps.cap - d) / ps.p)
}

// Tokens returns the tokens state s holds at now, negative while
// reservations are owed. It is for display: the float rounds; no decision
// uses it.
func (ps Params) Tokens(s State, now int64) float64 {
	if ps.p == 0 {
		return 0
	}
	u := uint64(now) ^ signBit
	if u >= s.T {
		deff, _, _ := ps.refill(s.T, s.Deficit, u)
		return (float64(ps.cap) - float64(deff)) / float64(ps.p)
	}
	// Stale now: the tokens at T less the refill since u, which may not fit
	// in a deficit.
	return (float64(ps.cap) - float64(s.Deficit) - float64(s.T-u)*float64(ps.e)) / float64(ps.p)
}

// wait returns the ns after u until a cost of c units fits in state s if
// nothing else happens, w = ceil((deficit at u + c - cap)/e), computed in
// 128 bits so that a very stale u gets its true wait (limit.Never if it
// exceeds int64), and the units refilled in w beyond that need, in [0, e).
func (ps Params) wait(s State, u, c uint64) (w int64, spare uint64) {
	var hi, lo, carry uint64
	if u >= s.T {
		lo, _, _ = ps.refill(s.T, s.Deficit, u)
	} else {
		hi, lo = bits.Mul64(s.T-u, ps.e)
		lo, carry = bits.Add64(lo, s.Deficit, 0)
		hi += carry
	}
	lo, carry = bits.Add64(lo, c, 0)
	hi += carry
	if hi == 0 && lo <= ps.cap {
		return 0, 0
	}
	lo, carry = bits.Sub64(lo, ps.cap, 0)
	hi -= carry
	if hi >= ps.e {
		return int64(limit.Never), 0
	}
	q, r := bits.Div64(hi, lo, ps.e)
	if q >= uint64(limit.Never) {
		return int64(limit.Never), 0
	}
	if r != 0 {
		q++
		spare = ps.e - r
	}
	return int64(q), spare
}
