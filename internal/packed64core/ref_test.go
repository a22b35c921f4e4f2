package packed64core

// The reference models: each limiter on full (never wrapped) unit times in
// big integers, with the package's rounding and end-of-time rules and
// nothing else, for the tests and fuzzers to compare the steps with.

import (
	"math"
	"math/big"
	"time"

	"github.com/cellrate/cellrate/limit"
)

// bucketRef is the reference model: the same units, costs and capacity,
// in big integers, with the full (never wrapped) time of the last write.
type bucketRef struct {
	p       *BucketParams
	unit    *big.Int
	t       int64 // unit count of the last write
	deficit *big.Int
}

func newBucketRef(p *BucketParams) *bucketRef {
	return &bucketRef{p: p, unit: new(big.Int).Lsh(big.NewInt(1), uint(p.clk.shift)), deficit: new(big.Int)}
}

func (r *bucketRef) units(now int64) int64 { return refUnits(now, r.unit) }

// refUnits returns floor(now / unit).
func refUnits(now int64, unit *big.Int) int64 {
	q, m := new(big.Int).DivMod(big.NewInt(now), unit, new(big.Int)) // Euclidean: floors for a positive divisor
	_ = m
	return q.Int64()
}

// refRetry returns how long after now unit at begins: limit.Never if that
// is past the end of int64 time (after the unit of math.MaxInt64) or
// further than int64 ns away.
func refRetry(at *big.Int, now int64, unit *big.Int) int64 {
	if at.Cmp(big.NewInt(refUnits(math.MaxInt64, unit))) > 0 {
		return int64(limit.Never)
	}
	when := new(big.Int).Mul(at, unit)
	when.Sub(when, big.NewInt(now))
	if !when.IsInt64() {
		return int64(limit.Never)
	}
	return when.Int64()
}

// cost returns n*ceil(per*2^-shift/rate) in big integers: every token
// costs its refill time rounded up to whole units.
func (r *bucketRef) cost(n int64) *big.Int {
	num := new(big.Int).SetUint64(r.p.per)
	den := new(big.Int).Mul(new(big.Int).SetUint64(r.p.rate), r.unit)
	q, m := new(big.Int).DivMod(num, den, new(big.Int))
	if m.Sign() != 0 {
		q.Add(q, big.NewInt(1))
	}
	return q.Mul(q, big.NewInt(n))
}

// tokens returns the whole tokens that fit a bucket with deficit d.
func (r *bucketRef) tokens(d *big.Int) int64 {
	left := new(big.Int).Sub(r.cost(int64(r.p.burst)), d)
	if left.Sign() < 0 {
		return 0
	}
	return left.Quo(left, r.cost(1)).Int64()
}

func (r *bucketRef) step(now, n int64) limit.Result {
	if n < 0 || n > int64(r.p.burst) {
		return limit.Result{RetryAfter: limit.Never}
	}
	// The bucket is empty at unit z = t + deficit and refills one unit of
	// deficit per unit of time: at u its deficit is z - u, at least 0.
	t, d := r.t, new(big.Int).Set(r.deficit)
	u := r.units(now)
	if d.Sign() == 0 {
		t = u
	}
	z := new(big.Int).Add(big.NewInt(t), d)
	at := new(big.Int).Sub(z, big.NewInt(u)) // the deficit at u
	if at.Sign() < 0 {
		at.SetInt64(0)
	}
	if n == 0 {
		return limit.Result{OK: true, Remaining: r.tokens(at)}
	}
	need := new(big.Int).Add(at, r.cost(n))
	capacity := r.cost(int64(r.p.burst))
	if need.Cmp(capacity) > 0 {
		when := new(big.Int).Add(big.NewInt(u), need.Sub(need, capacity))
		return limit.Result{Remaining: r.tokens(at), RetryAfter: time.Duration(refRetry(when, now, r.unit))}
	}
	// The time never moves back: a stale u is written at t.
	r.t = max(t, u)
	if z.Cmp(big.NewInt(r.t)) < 0 {
		z.SetInt64(r.t)
	}
	r.deficit = z.Sub(z, big.NewInt(r.t)).Add(z, r.cost(n))
	return limit.Result{OK: true, Remaining: r.tokens(need)}
}

// windowRef is the reference model: the counter on full (never wrapped)
// unit times, its estimate compared in exact rationals.
type windowRef struct {
	p               *WindowParams
	start           int64
	prev, cur       int64
	unitNs, l, wLen *big.Int
}

func newWindowRef(p *WindowParams) *windowRef {
	return &windowRef{p: p, unitNs: new(big.Int).Lsh(big.NewInt(1), uint(p.clk.shift)),
		l: new(big.Int).SetUint64(p.r.L), wLen: new(big.Int).SetUint64(p.r.W)}
}

func (r *windowRef) units(now int64) int64 { return refUnits(now, r.unitNs) }

// Where a caller's time falls against the model's windows.
const (
	inCur  = iota // the current window
	inPrev        // the previous one: decided as at its end, counted in it
	before        // before both: nothing admitted
)

// view returns the rotated counter and the elapsed units at unit u, and
// where u falls. Differences of unit times are taken in big integers, so
// the model holds anywhere in int64 time.
func (r *windowRef) view(u int64) (start, prev, cur, e int64, at int) {
	w := int64(r.p.r.W)
	d := new(big.Int).Sub(big.NewInt(u), big.NewInt(r.start)) // u - start
	switch {
	case r.prev == 0 && r.cur == 0:
		return u, 0, 0, 0, inCur
	case d.Cmp(big.NewInt(-w)) < 0:
		return r.start, r.prev, r.cur, 0, before
	case d.Sign() < 0:
		return r.start, r.prev, r.cur, 0, inPrev
	case d.Cmp(big.NewInt(w)) < 0:
		return r.start, r.prev, r.cur, d.Int64(), inCur
	case d.Cmp(big.NewInt(2*w)) < 0 && r.cur != 0:
		return r.start + w, r.cur, 0, d.Int64() - w, inCur
	}
	return u, 0, 0, 0, inCur
}

func (r *windowRef) estimate(prev, cur, e int64) *big.Rat {
	x := big.NewRat(prev*(int64(r.p.r.W)-e), int64(r.p.r.W))
	return x.Add(x, big.NewRat(cur, 1))
}

// fits reports whether n units fit at unit u.
func (r *windowRef) fits(u, n int64) bool {
	_, prev, cur, e, at := r.view(u)
	if at == before {
		return false
	}
	est := r.estimate(prev, cur, e)
	return est.Add(est, big.NewRat(n, 1)).Cmp(new(big.Rat).SetInt(r.l)) <= 0
}

func (r *windowRef) remaining(prev, cur, e int64, at int) int64 {
	if at == before {
		return 0
	}
	left := new(big.Rat).Sub(new(big.Rat).SetInt(r.l), r.estimate(prev, cur, e))
	if left.Sign() <= 0 {
		return 0
	}
	return new(big.Int).Quo(left.Num(), left.Denom()).Int64()
}

func (r *windowRef) step(now, n int64) limit.Result {
	if n < 0 || uint64(n) > r.p.r.L {
		return limit.Result{RetryAfter: limit.Never}
	}
	u := r.units(now)
	start, prev, cur, e, at := r.view(u)
	if n == 0 {
		return limit.Result{OK: true, Remaining: r.remaining(prev, cur, e, at)}
	}
	if !r.fits(u, n) {
		// The first unit at which n fits, by bisection over the model's own
		// decision, which only improves as time passes; none after the
		// last unit a time maps to is Never.
		last := r.units(math.MaxInt64)
		if u == last || !r.fits(last, n) {
			return limit.Result{Remaining: r.remaining(prev, cur, e, at), RetryAfter: limit.Never}
		}
		lo, hi := u, last // n does not fit at lo and fits at hi
		for uint64(hi)-uint64(lo) > 1 {
			if mid := lo + int64((uint64(hi)-uint64(lo))/2); r.fits(mid, n) {
				hi = mid
			} else {
				lo = mid
			}
		}
		return limit.Result{Remaining: r.remaining(prev, cur, e, at), RetryAfter: time.Duration(refRetry(big.NewInt(hi), now, r.unitNs))}
	}
	if at == inPrev {
		prev += n
	} else {
		cur += n
	}
	r.start, r.prev, r.cur = start, prev, cur
	return limit.Result{OK: true, Remaining: r.remaining(prev, cur, e, at)}
}
