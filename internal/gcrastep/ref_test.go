package gcrastep

import (
	"math"
	"math/big"
	"testing"
	"time"

	"github.com/cellrate/cellrate/limit"
)

// ref is the reference model: GCRA over exact rationals, in nanoseconds
// counted from math.MinInt64. It shares no arithmetic with the package: the
// TAT is a big.Rat, and the grid rounding of an idle restart is written as
// ceil(now/step)*step with step = T/floor(T).
type ref struct {
	T, step *big.Rat
	b       int64
	tat     *big.Rat
	end     *big.Rat // 2^64 steps: TATs at or past it are refused
}

func newRef(events int64, period time.Duration, burst int64) *ref {
	T := new(big.Rat).SetFrac64(int64(period), events)
	fl := new(big.Int).Quo(T.Num(), T.Denom())
	step := new(big.Rat).Quo(T, new(big.Rat).SetInt(fl))
	end := new(big.Rat).Mul(step, new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), 64)))
	return &ref{T: T, step: step, b: burst, tat: new(big.Rat), end: end}
}

func ratNow(now int64) *big.Rat {
	x := new(big.Int).SetInt64(now)
	x.Sub(x, big.NewInt(math.MinInt64))
	return new(big.Rat).SetInt(x)
}

func floorRat(x *big.Rat) *big.Int {
	q, m := new(big.Int), new(big.Int)
	q.DivMod(x.Num(), x.Denom(), m) // Euclidean: floor for a positive denominator
	return q
}

func ceilRat(x *big.Rat) *big.Int {
	q := floorRat(x)
	if !x.IsInt() {
		q.Add(q, big.NewInt(1))
	}
	return q
}

func maxRat(a, b *big.Rat) *big.Rat {
	if a.Cmp(b) >= 0 {
		return a
	}
	return b
}

func (m *ref) step1(now, n int64) limit.Result {
	u := ratNow(now)
	nT := new(big.Rat).Mul(m.T, new(big.Rat).SetInt64(n))
	bT := new(big.Rat).Mul(m.T, new(big.Rat).SetInt64(m.b))
	tokens := func(tat *big.Rat) int64 { // whole events available at now
		x := new(big.Rat).Sub(new(big.Rat).Add(u, bT), maxRat(tat, u))
		x.Quo(x, m.T)
		f := floorRat(x)
		if f.Sign() < 0 {
			return 0
		}
		return f.Int64()
	}
	if n == 0 {
		return limit.Result{OK: true, Remaining: tokens(m.tat)}
	}
	lead := new(big.Rat).Sub(new(big.Rat).Add(maxRat(m.tat, u), nT), u)
	if lead.Cmp(bT) <= 0 {
		base := m.tat
		if m.tat.Cmp(u) < 0 {
			k := ceilRat(new(big.Rat).Quo(u, m.step))
			base = new(big.Rat).Mul(new(big.Rat).SetInt(k), m.step)
		}
		next := new(big.Rat).Add(base, nT)
		if next.Cmp(m.end) < 0 {
			m.tat = next
			return limit.Result{OK: true, Remaining: tokens(next)}
		}
	}
	r := limit.Result{Remaining: tokens(m.tat), RetryAfter: limit.Never}
	// Admitted at now+w once tat + nT - bT <= now + w.
	w := new(big.Rat).Sub(new(big.Rat).Sub(new(big.Rat).Add(m.tat, nT), bT), u)
	if w.Sign() > 0 {
		c := ceilRat(w)
		if c.IsInt64() {
			r.RetryAfter = time.Duration(c.Int64())
		}
	}
	return r
}

// tokens returns the events available at now, with their fraction:
// b - (tat - now)/T while the TAT leads now, b once it does not.
func (m *ref) tokens(now int64) *big.Rat {
	lead := new(big.Rat).Sub(maxRat(m.tat, ratNow(now)), ratNow(now))
	lead.Quo(lead, m.T)
	return lead.Sub(new(big.Rat).SetInt64(m.b), lead)
}

// checkTokens compares Params.tokensAt with the model's exact tokens at now,
// up to the float's rounding: a few ulps of the lead and of the burst.
func checkTokens(t testing.TB, ps Params, s State, m *ref, now int64) {
	t.Helper()
	got := ps.TokensAt(s, now)
	want, _ := m.tokens(now).Float64()
	lead := float64(m.b) - want
	if math.Abs(got-want) > 1e-14*(float64(m.b)+math.Abs(lead)) {
		t.Fatalf("Tokens(%d, %d) = %v, model %v", s, now, got, want)
	}
}
