package bucketcore

import (
	"math"
	"math/big"
	"time"

	"github.com/cellrate/cellrate/limit"
)

// model is the reference: a token bucket over exact rationals, in tokens
// and nanoseconds from math.MinInt64. It shares no arithmetic with the
// package (no units, no deficits, no 128-bit tricks).
type model struct {
	r     *big.Rat // tokens per ns
	b     *big.Rat
	t     *big.Int
	tok   *big.Rat
	epoch int // bumped by setParams, which voids loans
}

func newModel(events int64, period time.Duration, burst int64) *model {
	return &model{
		r:   new(big.Rat).SetFrac64(events, int64(period)),
		b:   new(big.Rat).SetInt64(burst),
		t:   new(big.Int),
		tok: new(big.Rat).SetInt64(burst),
	}
}

func bigNow(now int64) *big.Int {
	return new(big.Int).Sub(big.NewInt(now), big.NewInt(math.MinInt64))
}

// at returns the tokens at u, the tokens to build on and the time to store.
func (m *model) at(u *big.Int) (have, base *big.Rat, nt *big.Int) {
	lag := new(big.Rat).SetInt(new(big.Int).Sub(u, m.t))
	lag.Mul(lag, m.r)
	x := new(big.Rat).Add(m.tok, lag)
	if u.Cmp(m.t) >= 0 {
		if x.Cmp(m.b) > 0 {
			x.Set(m.b)
		}
		return x, x, u
	}
	return x, m.tok, m.t
}

func floorR(x *big.Rat) *big.Int {
	q, r := new(big.Int), new(big.Int)
	q.DivMod(x.Num(), x.Denom(), r)
	return q
}

func ceilR(x *big.Rat) *big.Int {
	q := floorR(x)
	if !x.IsInt() {
		q.Add(q, big.NewInt(1))
	}
	return q
}

func (m *model) remaining(x *big.Rat) int64 {
	if f := floorR(x); f.Sign() > 0 {
		return f.Int64()
	}
	return 0
}

func (m *model) wait(have, c *big.Rat) int64 {
	w := new(big.Rat).Quo(new(big.Rat).Sub(c, have), m.r)
	if w.Sign() <= 0 {
		return 0
	}
	q := ceilR(w)
	if !q.IsInt64() || q.Int64() == math.MaxInt64 {
		return int64(limit.Never)
	}
	return q.Int64()
}

func (m *model) allow(now int64, c *big.Rat) limit.Result {
	have, base, nt := m.at(bigNow(now))
	if have.Cmp(c) < 0 {
		return limit.Result{Remaining: m.remaining(have), RetryAfter: time.Duration(m.wait(have, c))}
	}
	if c.Sign() > 0 {
		m.tok, m.t = new(big.Rat).Sub(base, c), nt
	}
	return limit.Result{OK: true, Remaining: m.remaining(new(big.Rat).Sub(have, c))}
}

type modelRes struct {
	ok    bool
	wait  int64
	cost  *big.Rat
	t     *big.Int // the state the reservation left
	tok   *big.Rat
	done  int64
	epoch int
}

func (m *model) reserve(now int64, c *big.Rat, maxDebt *big.Rat) modelRes {
	have, base, nt := m.at(bigNow(now))
	after := new(big.Rat).Sub(base, c)
	if new(big.Rat).Sub(m.b, after).Cmp(maxDebt) > 0 {
		return modelRes{wait: int64(limit.Never)}
	}
	w := m.wait(have, c)
	if w == int64(limit.Never) {
		return modelRes{wait: int64(limit.Never)}
	}
	if w > 0 {
		// Charged as admitted at the whole-ns act time now+w.
		extra := new(big.Rat).Sub(new(big.Rat).Mul(new(big.Rat).SetInt64(w), m.r), new(big.Rat).Sub(c, have))
		c = new(big.Rat).Add(c, extra)
		after = new(big.Rat).Sub(base, c)
		if new(big.Rat).Sub(m.b, after).Cmp(maxDebt) > 0 {
			return modelRes{wait: int64(limit.Never)}
		}
	}
	done := now + w
	if done < now {
		return modelRes{wait: int64(limit.Never)}
	}
	if c.Sign() > 0 {
		m.tok, m.t = after, nt
	}
	return modelRes{ok: true, wait: w, cost: c, t: m.t, tok: m.tok, done: done, epoch: m.epoch}
}

func (m *model) cancel(now int64, r *modelRes) bool {
	ok := r.ok && r.cost.Sign() > 0 && now <= r.done && r.epoch == m.epoch && r.t.Cmp(m.t) == 0 && r.tok.Cmp(m.tok) == 0
	r.ok = false
	if ok {
		m.tok = new(big.Rat).Add(m.tok, r.cost)
	}
	return ok
}

type modelLoan struct {
	n     int64
	t     *big.Int
	tok   *big.Rat
	epoch int
}

func (m *model) take(now, k int64) modelLoan {
	have, base, nt := m.at(bigNow(now))
	if k <= 0 || have.Sign() <= 0 {
		return modelLoan{}
	}
	n := min(k, m.remaining(have))
	if n == 0 {
		return modelLoan{}
	}
	m.tok, m.t = new(big.Rat).Sub(base, new(big.Rat).SetInt64(n)), nt
	return modelLoan{n: n, t: nt, tok: m.tok, epoch: m.epoch}
}

// giveBack credits up to k of the loan while the bucket is exactly as the
// loan left it, and nothing otherwise.
func (m *model) giveBack(now int64, ln *modelLoan, k int64) *big.Rat {
	k = min(k, ln.n)
	ln.n = 0
	if k <= 0 || ln.epoch != m.epoch || ln.t.Cmp(m.t) != 0 || ln.tok.Cmp(m.tok) != 0 {
		return new(big.Rat)
	}
	credit := new(big.Rat).SetInt64(k)
	m.tok = new(big.Rat).Add(m.tok, credit)
	return credit
}

// setParams: refill at the old rate to now (unless stale), round the tokens
// down to a unit (1/period of the new reduced rate), cap at the new burst.
func (m *model) setParams(now int64, events int64, period time.Duration, burst int64) {
	_, base, nt := m.at(bigNow(now))
	// The new Params start after every state of the old: 1ns after the
	// last refill when now is not after it (but never past the end).
	if nt.Cmp(m.t) == 0 && nt.Cmp(bigNow(math.MaxInt64)) < 0 {
		nt = new(big.Int).Add(nt, big.NewInt(1))
	}
	r := new(big.Rat).SetFrac64(events, int64(period))
	unit := new(big.Rat).SetInt(r.Denom()) // units per token
	tok := new(big.Rat).SetInt(floorR(new(big.Rat).Mul(base, unit)))
	tok.Quo(tok, unit)
	b := new(big.Rat).SetInt64(burst)
	if tok.Cmp(b) > 0 {
		tok = b
	}
	m.r, m.b, m.tok, m.t = r, b, tok, nt
	m.epoch++
}
