package bucket

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"time"

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

// Params is the rate and burst of a bucket in the integer form Step uses.
// It is immutable; the zero Params is invalid (make one with NewParams or
// RateParams).
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
// period and holds at most burst tokens.
func NewParams(events int64, period time.Duration, burst int64) (Params, error) {
	switch {
	case events < 1:
		return Params{}, fmt.Errorf("bucket: events must be >= 1, got %d", events)
	case period < 1:
		return Params{}, fmt.Errorf("bucket: period must be >= 1ns, got %v", period)
	}
	return params(uint64(events), uint64(period), burst)
}

// RateParams returns the Params of a bucket that refills rate tokens per
// second and holds at most burst tokens. The float is read as the fraction
// num/den nearest to it with den <= 2^32 and within 2^-50 of it relatively
// (0.5, 1e-3 and 1.0/3 become 1/2, 1/1000 and 1/3 exactly); use NewParams to
// give a rate as an exact fraction.
func RateParams(rate float64, burst int64) (Params, error) {
	if math.IsNaN(rate) || math.IsInf(rate, 0) || rate <= 0 {
		return Params{}, fmt.Errorf("bucket: rate must be a finite number of tokens per second > 0, got %v", rate)
	}
	num, den, ok := fraction(rate)
	if !ok {
		return Params{}, fmt.Errorf("bucket: rate %v tokens per second is out of range [2^-32, 2^62]", rate)
	}
	return params(num, den*uint64(time.Second), burst)
}

func params(events, period uint64, burst int64) (Params, error) {
	if burst < 1 {
		return Params{}, fmt.Errorf("bucket: burst must be >= 1, got %d", burst)
	}
	g := gcd(events, period)
	e, p := events/g, period/g
	hi, c := bits.Mul64(uint64(burst), p)
	if hi != 0 || c > maxCap {
		return Params{}, fmt.Errorf("bucket: burst %d is too large for the rate: a token is %d units and burst*units exceeds 2^61", burst, p)
	}
	return Params{e: e, p: p, burst: uint64(burst), cap: c}, nil
}

// fraction returns num/den, den <= 2^32, within 2^-50 relative of x, from
// x's continued fraction.
func fraction(x float64) (num, den uint64, ok bool) {
	r := new(big.Rat).SetFloat64(x)
	h0, h1 := big.NewInt(0), big.NewInt(1) // numerators h[k-2], h[k-1]
	k0, k1 := big.NewInt(1), big.NewInt(0) // denominators
	rest := new(big.Rat).Set(r)
	tol := new(big.Rat).Mul(r, new(big.Rat).SetFrac64(1, 1<<50))
	for range 64 {
		a := new(big.Int).Quo(rest.Num(), rest.Denom())
		h := new(big.Int).Add(new(big.Int).Mul(a, h1), h0)
		k := new(big.Int).Add(new(big.Int).Mul(a, k1), k0)
		if k.BitLen() > 32 {
			break
		}
		h0, h1, k0, k1 = h1, h, k1, k
		diff := new(big.Rat).Sub(r, new(big.Rat).SetFrac(h, k))
		frac := new(big.Rat).Sub(rest, new(big.Rat).SetInt(a))
		if diff.Abs(diff).Cmp(tol) <= 0 || frac.Sign() == 0 {
			break
		}
		rest.Inv(frac)
	}
	if h1.Sign() == 0 || h1.BitLen() > 62 || k1.Sign() == 0 {
		return 0, 0, false
	}
	return h1.Uint64(), k1.Uint64(), true
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// Burst returns the most tokens the bucket holds.
func (ps Params) Burst() int64 { return int64(ps.burst) }

// Unit returns the number of units in one token: the fixed-point scale of a
// State's Deficit and of StepUnits' cost.
func (ps Params) Unit() int64 { return int64(ps.p) }

// Rate returns the refill rate as events tokens per period, in lowest terms.
func (ps Params) Rate() (events int64, period time.Duration) {
	return int64(ps.e), time.Duration(ps.p)
}

// CostUnits converts a cost of num/den tokens to units, rounding up to a
// whole unit (exact whenever den divides num*Unit(): for example any den
// dividing the period in nanoseconds). It returns ErrNegativeCost or
// ErrCostExceedsBurst for a cost no bucket of these Params can admit.
func (ps Params) CostUnits(num, den int64) (int64, error) {
	if den <= 0 {
		return 0, errDenominator(den)
	}
	if num < 0 {
		return 0, limit.ErrNegativeCost
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

// State is a bucket's 128-bit state: T is the time of the last refill as
// uint64(now) ^ 1<<63 (so the unsigned order is int64 time's order) and
// Deficit is how many units the bucket lacks of full at T. The zero State is
// a full bucket at any now. A Deficit above the capacity is debt run up by
// reservations.
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

// Step is the bucket's decision as a pure function: given state s, now and
// a cost of n whole tokens, it returns the state to store and the Result. A
// denial returns s unchanged, so a store need not be written then.
//
// n < 0 returns limit.ErrNegativeCost and n > burst limit.ErrCostExceedsBurst,
// each with a Result that is not OK.
func (ps Params) Step(s State, now, n int64) (State, limit.Result, error) {
	if n < 0 {
		return s, limit.Result{RetryAfter: limit.Never}, limit.ErrNegativeCost
	}
	if uint64(n) > ps.burst {
		return s, limit.Result{RetryAfter: limit.Never}, limit.ErrCostExceedsBurst
	}
	next, r := ps.StepUnits(s, now, int64(uint64(n)*ps.p))
	return next, r, nil
}

// StepUnits is Step for a cost in units (see Unit and CostUnits), which
// must be in [0, Burst()*Unit()].
func (ps Params) StepUnits(s State, now, cost int64) (State, limit.Result) {
	c, u := uint64(cost), uint64(now)^signBit
	deff, base, nt := ps.refill(s.T, s.Deficit, u)
	if deff+c > ps.cap {
		w, _ := ps.wait(s, u, c)
		return s, limit.Result{Remaining: ps.remaining(deff), RetryAfter: w}
	}
	if c == 0 {
		return s, limit.Result{OK: true, Remaining: ps.remaining(deff)}
	}
	return State{nt, base + c}, limit.Result{OK: true, Remaining: ps.remaining(deff + c)}
}

// remaining is the whole tokens held at a deficit of d.
func (ps Params) remaining(d uint64) int64 {
	if d >= ps.cap {
		return 0
	}
	return int64((ps.cap - d) / ps.p)
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
		return limit.Never, 0
	}
	q, r := bits.Div64(hi, lo, ps.e)
	if q >= uint64(limit.Never) {
		return limit.Never, 0
	}
	if r != 0 {
		q++
		spare = ps.e - r
	}
	return int64(q), spare
}

// convert carries state s of params from into params to, settled at now:
// refilled at the old rate up to now (unless now is stale), then the same
// number of tokens, rounded down to a unit of to and capped at its burst.
func convert(from, to *Params, s State, now int64) State {
	_, base, nt := from.refill(s.T, s.Deficit, uint64(now)^signBit)
	// tokens = (cap - deficit)/p, possibly negative (debt).
	tok := new(big.Int).Sub(new(big.Int).SetUint64(from.cap), new(big.Int).SetUint64(base))
	tok.Mul(tok, new(big.Int).SetUint64(to.p))
	m := new(big.Int)
	tok.DivMod(tok, new(big.Int).SetUint64(from.p), m) // floor
	d := new(big.Int).Sub(new(big.Int).SetUint64(to.cap), tok)
	switch {
	case d.Sign() < 0:
		d.SetInt64(0)
	case d.Cmp(big.NewInt(maxDeficit)) > 0:
		d.SetInt64(maxDeficit)
	}
	return State{nt, d.Uint64()}
}

func errDenominator(den int64) error {
	return fmt.Errorf("bucket: cost denominator must be >= 1, got %d", den)
}
