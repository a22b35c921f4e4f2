package bucket

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/cellrate/cellrate/internal/bound"
	"github.com/cellrate/cellrate/internal/limittest"
	"github.com/cellrate/cellrate/internal/race"
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
		return limit.Never
	}
	return q.Int64()
}

func (m *model) allow(now int64, c *big.Rat) limit.Result {
	have, base, nt := m.at(bigNow(now))
	if have.Cmp(c) < 0 {
		return limit.Result{Remaining: m.remaining(have), RetryAfter: m.wait(have, c)}
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
		return modelRes{wait: limit.Never}
	}
	w := m.wait(have, c)
	if w == limit.Never {
		return modelRes{wait: limit.Never}
	}
	if w > 0 {
		// Charged as admitted at the whole-ns act time now+w.
		extra := new(big.Rat).Sub(new(big.Rat).Mul(new(big.Rat).SetInt64(w), m.r), new(big.Rat).Sub(c, have))
		c = new(big.Rat).Add(c, extra)
		after = new(big.Rat).Sub(base, c)
		if new(big.Rat).Sub(m.b, after).Cmp(maxDebt) > 0 {
			return modelRes{wait: limit.Never}
		}
	}
	done := now + w
	if done < now {
		return modelRes{wait: limit.Never}
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

// use is tokens put to use at a time, in units of the bucket's Params.
type use = bound.Use

// checkBound checks the uses against cap + e*t units (burst + rate*t).
func checkBound(t testing.TB, uses []use, ps Params) {
	t.Helper()
	if err := bound.Check(uses, ps.cap, ps.e, 1); err != nil {
		t.Fatal(err)
	}
}

type sched struct {
	events int64
	period time.Duration
	burst  int64
}

// runSchedule drives a Limiter and the model through random operations at
// random (stale, jumping, extreme) times, comparing every answer, and
// returns the tokens used, for the bound.
func runSchedule(t testing.TB, rng *rand.Rand, sc sched, count int, setParams bool) []use {
	t.Helper()
	l, err := NewPer(sc.events, sc.period, sc.burst)
	if err != nil {
		t.Fatal(err)
	}
	m := newModel(sc.events, sc.period, sc.burst)
	ps := l.Params()
	T := max(int64(sc.period)/sc.events, 1)
	now := rng.Int64() - math.MaxInt64/2
	switch rng.IntN(8) {
	case 0:
		now = math.MinInt64 + rng.Int64N(1<<20)
	case 1:
		now = math.MaxInt64 - rng.Int64N(1<<40)
	}
	var uses []use
	type res struct {
		r   Reservation
		m   modelRes
		use int
	}
	type loan struct {
		l   Loan
		m   modelLoan
		use int
	}
	var rs []res
	var loans []loan
	unit := new(big.Rat).SetInt64(ps.Unit())
	for i := range count {
		switch k := rng.IntN(100); {
		case k < 55:
			now = satAdd(now, rng.Int64N(T+1))
		case k < 70:
			now -= min(rng.Int64N(T*sc.burst+2), now-math.MinInt64)
		case k < 74:
			now = satAdd(now, rng.Int64N(1<<62))
		case k < 76:
			now -= min(rng.Int64N(1<<62), now-math.MinInt64)
		}
		st := l.cur.Load()
		t0, d0 := st.state.Load()
		mt, mtok := m.t, m.tok
		fail := func(what string, got, want any) {
			t.Fatalf("%+v op %d at %d, %s: got %+v, model %+v; before: state %d %d, model %v %v", sc, i, now, what, got, want, t0, d0, mt, mtok)
		}
		switch op := rng.IntN(12); {
		case op < 3:
			got, want := l.AllowAt(now), m.allow(now, big.NewRat(1, 1)).OK
			if got != want {
				fail("AllowAt", got, want)
			}
			if got {
				uses = append(uses, use{At: now, Cost: ps.Unit(), Kind: "allow"})
			}
		case op < 6:
			n := rng.Int64N(sc.burst + 1)
			got, err := l.AllowNAt(now, n)
			want := m.allow(now, new(big.Rat).SetInt64(n))
			if err != nil || got != want {
				fail("AllowNAt", got, want)
			}
			if got.OK {
				uses = append(uses, use{At: now, Cost: n * ps.Unit(), Kind: "allowN"})
			}
		case op < 7:
			den := 1 + rng.Int64N(1000)
			num := rng.Int64N(sc.burst*den + 1)
			got, err := l.AllowFracAt(now, num, den)
			if err != nil {
				fail("AllowFracAt", err, nil)
			}
			units := ceilR(new(big.Rat).Mul(big.NewRat(num, den), unit)).Int64()
			want := m.allow(now, new(big.Rat).Quo(new(big.Rat).SetInt64(units), unit))
			if got != want {
				fail("AllowFracAt", got, want)
			}
			if got.OK {
				uses = append(uses, use{At: now, Cost: units, Kind: "frac"})
			}
		case op < 8:
			n := rng.Int64N(sc.burst + 1)
			r, err := l.ReserveAt(now, n)
			mr := m.reserve(now, new(big.Rat).SetInt64(n), new(big.Rat).SetFrac64(maxDeficit, ps.Unit()))
			if err != nil || r.OK != mr.ok || r.Wait != mr.wait {
				fail("ReserveAt", r, mr)
			}
			if r.OK {
				rs = append(rs, res{r, mr, len(uses)})
				uses = append(uses, use{At: r.done, Cost: n * ps.Unit(), Kind: "reserve"})
			}
		case op < 9 && len(rs) > 0:
			j := rng.IntN(len(rs))
			before := fmt.Sprint(rs[j].r.t, rs[j].r.d, rs[j].r.done, rs[j].r.cost, "|", rs[j].m.t, rs[j].m.tok, rs[j].m.done, "|", m.t, m.tok)
			if got, want := rs[j].r.CancelAt(now), m.cancel(now, &rs[j].m); got != want {
				fail("CancelAt "+before, got, want)
			} else if got {
				uses[rs[j].use].Cost = 0
			}
		case op < 10:
			k := rng.Int64N(sc.burst + 2)
			ln := l.TakeUpToAt(now, k)
			ml := m.take(now, k)
			if ln.N != ml.n {
				fail("TakeUpToAt", ln.N, ml.n)
			}
			if ln.N > 0 {
				loans = append(loans, loan{ln, ml, len(uses)})
				uses = append(uses, use{At: now, Cost: ln.N * ps.Unit(), Kind: "take"})
			}
		case op < 11 && len(loans) > 0:
			j := rng.IntN(len(loans))
			k := rng.Int64N(loans[j].l.N + 1)
			got := l.GiveBack(&loans[j].l, k)
			want := m.giveBack(now, &loans[j].m, k)
			if new(big.Rat).SetFrac64(got, ps.Unit()).Cmp(want) != 0 {
				fail("GiveBack", got, want)
			}
			uses[loans[j].use].Cost -= got
		case op < 12 && setParams:
			ev := 1 + rng.Int64N(1000)
			per := time.Duration(1 + rng.Int64N(int64(time.Second)))
			b := 1 + rng.Int64N(20)
			nps, err := NewParams(ev, per, b)
			if err != nil {
				continue
			}
			l.SetParamsAt(now, nps)
			m.setParams(now, ev, per, b)
			ps, sc = nps, sched{ev, per, b}
			unit = new(big.Rat).SetInt64(ps.Unit())
			T = max(int64(per)/ev, 1)
		default:
			if got, want := l.TokensAt(now), tokensFloat(m, now); math.Abs(got-want) > 1e-9*max(1, math.Abs(want)) {
				fail("TokensAt", got, want)
			}
		}
	}
	return uses
}

func tokensFloat(m *model, now int64) float64 {
	have, _, _ := m.at(bigNow(now))
	f, _ := have.Float64()
	return f
}

var cases = []sched{
	{5, time.Second, 10},
	{3, time.Second, 1},        // a third of a token per 1e9/3 ns
	{1, 2 * time.Second, 3},    // 0.5 per second
	{1, 1000 * time.Second, 2}, // 1e-3 per second
	{2, 3, 7},                  // 2 per 3 ns
	{1e9, time.Second, 5},      // one per ns
	{999983, time.Second, 1000},
	{3, 1e14 + 1, 2},
}

func TestScheduleMatchesModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	runs := 20
	if race.Enabled { // one goroutine: see package race
		runs = 12
	}
	for _, sc := range cases {
		for range runs {
			uses := runSchedule(t, rng, sc, 300, false)
			ps, _ := NewParams(sc.events, sc.period, sc.burst)
			checkBound(t, uses, ps)
		}
	}
}

func TestSetParamsMatchesModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, sc := range cases {
		for range 10 {
			runSchedule(t, rng, sc, 300, true)
		}
	}
}

func FuzzSchedule(f *testing.F) {
	f.Add(int64(3), int64(time.Second), int64(1), uint64(1))
	f.Add(int64(1), int64(2*time.Second), int64(3), uint64(2))
	f.Add(int64(2), int64(3), int64(7), uint64(3))
	f.Add(int64(1), int64(1000*time.Second), int64(2), uint64(4))
	f.Fuzz(func(t *testing.T, events, period, burst int64, seed uint64) {
		ps, err := NewParams(events, time.Duration(period), burst)
		if err != nil || burst > 1<<12 {
			t.Skip()
		}
		rng := rand.New(rand.NewPCG(seed, seed>>5))
		uses := runSchedule(t, rng, sched{events, time.Duration(period), burst}, 300, seed%4 == 0)
		if seed%4 != 0 {
			checkBound(t, uses, ps)
		}
	})
}

func TestFractionalRatesDoNotDrift(t *testing.T) {
	// A million batch-borrows of everything available, at a fixed odd step,
	// over simulated years: the refill is exact, so the total taken is
	// exactly the initial burst plus the whole tokens refilled by the end.
	// Under -race, only the first tenth of them.
	part := int64(1)
	if race.Enabled { // one goroutine: see package race
		part = 10
	}
	for _, c := range []struct {
		rate  float64
		years int64
	}{{1e-3, 100}, {0.5, 2}, {1.0 / 3, 1}, {7.3, 1}} {
		l, err := New(c.rate, 1000)
		if err != nil {
			t.Fatal(err)
		}
		ev, per := l.Params().Rate()
		span := c.years * 365 * 24 * int64(time.Hour)
		step := span/1e6 + 7
		var n, last int64
		for now := int64(0); now <= span/part; now += step {
			n += l.TakeUpToAt(now, 1000).N
			last = now
		}
		want := 1000 + new(big.Int).Quo(new(big.Int).Mul(big.NewInt(last), big.NewInt(ev)), big.NewInt(int64(per))).Int64()
		if n != want {
			t.Errorf("rate %v: took %d, exact %d", c.rate, n, want)
		}
	}
}

func TestFractionalCosts(t *testing.T) {
	l, _ := New(1, 1) // one token per second
	// Ten costs of 1/10 token empty the bucket exactly.
	for i := range 10 {
		if r, err := l.AllowFracAt(0, 1, 10); err != nil || !r.OK {
			t.Fatalf("cost %d of 1/10 refused: %+v %v", i, r, err)
		}
	}
	r, _ := l.AllowFracAt(0, 1, 10)
	if r.OK || r.RetryAfter != int64(100*time.Millisecond) {
		t.Fatalf("11th tenth: %+v", r)
	}
	ps := l.Params()
	if u, _ := ps.CostUnits(1, 3); u != (ps.Unit()+2)/3 {
		t.Fatalf("1/3 token is %d units of %d, want rounded up", u, ps.Unit())
	}
}

func TestRateParams(t *testing.T) {
	for _, c := range []struct {
		rate   float64
		events int64
		period time.Duration
	}{
		{0.5, 1, 2 * time.Second},
		{1e-3, 1, 1000 * time.Second},
		{1.0 / 3, 1, 3 * time.Second},
		{100, 1, 10 * time.Millisecond},
		{1e9, 1, 1},
		{2.5e9, 5, 2},
	} {
		ps, err := RateParams(c.rate, 1)
		if err != nil {
			t.Fatal(err)
		}
		if ev, per := ps.Rate(); ev != c.events || per != c.period {
			t.Errorf("RateParams(%v) = %d per %v, want %d per %v", c.rate, ev, per, c.events, c.period)
		}
	}
	for _, c := range []struct {
		rate  float64
		burst int64
		want  string
	}{
		{0, 1, "bucket: rate must be a finite number of tokens per second > 0, got 0"},
		{-1, 1, "bucket: rate must be a finite number of tokens per second > 0, got -1"},
		{math.NaN(), 1, "bucket: rate must be a finite number of tokens per second > 0, got NaN"},
		{math.Inf(1), 1, "bucket: rate must be a finite number of tokens per second > 0, got +Inf"},
		{1e-20, 1, "bucket: rate 1e-20 tokens per second is out of range [2^-32, 2^62]"},
		{1e30, 1, "bucket: rate 1e+30 tokens per second is out of range [2^-32, 2^62]"},
		{1, 0, "bucket: burst must be >= 1, got 0"},
		{1e-9, 3, "bucket: burst 3 is too large for the rate: a token is 1000000000000000000 units and burst*units exceeds 2^61"},
	} {
		_, err := New(c.rate, c.burst)
		if err == nil || err.Error() != c.want {
			t.Errorf("New(%v, %d) = %v, want %q", c.rate, c.burst, err, c.want)
		}
	}
	if _, err := NewPer(0, time.Second, 1); err == nil || err.Error() != "bucket: events must be >= 1, got 0" {
		t.Error(err)
	}
	if _, err := NewPer(1, 0, 1); err == nil || err.Error() != "bucket: period must be >= 1ns, got 0s" {
		t.Error(err)
	}
}

func TestErrors(t *testing.T) {
	l, _ := New(1, 2)
	if r, err := l.AllowNAt(0, -1); !errors.Is(err, limit.ErrNegativeCost) || r.OK {
		t.Errorf("n=-1: %+v %v", r, err)
	}
	if r, err := l.AllowNAt(0, 3); !errors.Is(err, limit.ErrCostExceedsBurst) || r.OK || r.RetryAfter != limit.Never {
		t.Errorf("n=3: %+v %v", r, err)
	}
	if _, err := l.AllowFracAt(0, 5, 2); !errors.Is(err, limit.ErrCostExceedsBurst) {
		t.Errorf("5/2: %v", err)
	}
	if _, err := l.AllowFracAt(0, 1, 0); err == nil {
		t.Error("den 0 accepted")
	}
	if _, err := l.ReserveAt(0, 3); !errors.Is(err, limit.ErrCostExceedsBurst) {
		t.Errorf("Reserve 3: %v", err)
	}
	if err := l.Wait(context.Background(), 3); !errors.Is(err, limit.ErrCostExceedsBurst) {
		t.Errorf("Wait 3: %v", err)
	}
}

func TestStaleNowCreatesNothing(t *testing.T) {
	l, _ := New(1, 3)
	now := int64(1e12)
	for l.AllowAt(now) {
	}
	for _, back := range []int64{1, int64(time.Second), 1 << 40, math.MaxInt64} {
		if l.AllowAt(satSub(now, back)) {
			t.Fatalf("stale now (-%d) admitted", back)
		}
		if ln := l.TakeUpToAt(satSub(now, back), 3); ln.N != 0 {
			t.Fatalf("stale take got %d", ln.N)
		}
	}
	r, _ := l.AllowNAt(now-int64(time.Second), 1)
	if r.OK || r.RetryAfter != int64(2*time.Second) {
		t.Fatalf("stale AllowNAt: %+v, want retry after 2s", r)
	}
}

func satSub(a, b int64) int64 {
	if s := a - b; s <= a {
		return s
	}
	return math.MinInt64
}

func TestExtremes(t *testing.T) {
	l, _ := NewPer(1, time.Nanosecond, 4)
	for _, now := range []int64{math.MinInt64, math.MinInt64 + 1, 0, math.MaxInt64 - 1, math.MaxInt64} {
		if !l.AllowAt(now) {
			t.Fatalf("refused at %d", now)
		}
	}
	for range 3 {
		l.AllowAt(math.MaxInt64)
	}
	if l.AllowAt(math.MaxInt64) || l.AllowAt(math.MinInt64) {
		t.Fatal("admitted past the burst at the end of time")
	}
}

func TestCancelRule(t *testing.T) {
	l, _ := NewPer(1, time.Second, 1)
	l.AllowAt(0)
	a, _ := l.ReserveAt(0, 1)
	if a.Wait != int64(time.Second) {
		t.Fatalf("wait %d", a.Wait)
	}
	b, _ := l.ReserveAt(0, 1)
	// b queued behind a: giving a's token back would let a newcomer act
	// alongside b at 2s.
	if a.CancelAt(int64(time.Second / 2)) {
		t.Fatal("a cancelled with b queued behind it")
	}
	if !b.CancelAt(int64(time.Second / 2)) {
		t.Fatal("last reservation not cancelled")
	}
	if b.CancelAt(0) {
		t.Fatal("cancelled twice")
	}
	c, _ := l.ReserveAt(0, 1)
	if c.CancelAt(c.Wait + 1) {
		t.Fatal("cancelled after its time to act")
	}
}

func TestGiveBackRule(t *testing.T) {
	l, _ := NewPer(1, time.Second, 10)
	ln := l.TakeUpToAt(0, 4)
	if ln.N != 4 {
		t.Fatalf("took %d", ln.N)
	}
	if got := l.GiveBack(&ln, 3); got != 3*int64(time.Second) {
		t.Fatalf("gave back %d units at once", got)
	}
	if l.GiveBack(&ln, 1) != 0 {
		t.Fatal("a loan gave back twice")
	}
	// A loan outlived by a full refill has expired.
	ln = l.TakeUpToAt(0, 10)
	for range 10 {
		if !l.AllowAt(int64(100 * time.Second)) {
			t.Fatal("refill refused")
		}
	}
	if got := l.GiveBack(&ln, 10); got != 0 {
		t.Fatalf("an expired loan gave back %d units", got)
	}
}

// TestConcurrentBound runs goroutines mixing every kind of take on one
// bucket, with a shared injected clock they advance, so their now values
// reach it out of order, and checks the bound over all uses.
func TestConcurrentBound(t *testing.T) {
	for _, sc := range []sched{{3, time.Microsecond, 5}, {1, 7, 2}, {1000, time.Millisecond, 50}} {
		l, _ := NewPer(sc.events, sc.period, sc.burst)
		ps := l.Params()
		var clock atomic.Int64
		clock.Store(int64(rand.Uint64() >> 2))
		const G = 8
		iters := 20000
		if testing.Short() {
			iters = 3000
		}
		per := make([][]use, G)
		var wg sync.WaitGroup
		for g := range G {
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(uint64(g), 9))
				T := int64(sc.period) / sc.events
				for range iters {
					now := clock.Add(rng.Int64N(T/G + 2))
					switch rng.IntN(5) {
					case 0:
						n := 1 + rng.Int64N(sc.burst)
						if r, _ := l.AllowNAt(now, n); r.OK {
							per[g] = append(per[g], use{At: now, Cost: n * ps.Unit(), Kind: "allowN"})
						}
					case 1:
						ln := l.TakeUpToAt(now, 1+rng.Int64N(sc.burst))
						taken := ln.N * ps.Unit()
						clock.Add(rng.Int64N(T + 1))
						taken -= l.GiveBack(&ln, rng.Int64N(ln.N+1))
						per[g] = append(per[g], use{At: now, Cost: taken, Kind: "take"})
					case 2:
						r, _ := l.ReserveAt(now, 1)
						if rng.IntN(2) == 0 && r.CancelAt(clock.Load()) {
							continue
						}
						per[g] = append(per[g], use{At: r.done, Cost: ps.Unit(), Kind: "reserve"})
					default:
						if l.AllowAt(now) {
							per[g] = append(per[g], use{At: now, Cost: ps.Unit(), Kind: "allow"})
						}
					}
				}
			})
		}
		wg.Wait()
		checkBound(t, slices.Concat(per...), ps)
	}
}

// TestConcurrentSetParams changes the rate and burst while goroutines use
// the bucket: no torn state, and the tokens never exceed the larger burst.
func TestConcurrentSetParams(t *testing.T) {
	l, _ := NewPer(1000, time.Millisecond, 50)
	var clock atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			for !stop.Load() {
				now := clock.Add(rng.Int64N(3000))
				l.AllowAt(now)
				_, _ = l.AllowNAt(now, 1+rng.Int64N(5))
				if tok := l.TokensAt(now); tok > 100 {
					t.Errorf("%v tokens", tok)
				}
			}
		})
	}
	rng := rand.New(rand.NewPCG(7, 7))
	for range 2000 {
		ps, _ := NewParams(1+rng.Int64N(1000), time.Duration(1+rng.Int64N(int64(time.Millisecond))), 5+rng.Int64N(96))
		l.SetParamsAt(clock.Load(), ps)
	}
	if err := l.SetRate(12.5); err != nil {
		t.Fatal(err)
	}
	if err := l.SetBurst(7); err != nil {
		t.Fatal(err)
	}
	stop.Store(true)
	wg.Wait()
	ps := l.Params()
	if ev, per := ps.Rate(); ps.Burst() != 7 || ev != 1 || per != 80*time.Millisecond {
		t.Fatalf("final params %d per %v burst %d", ev, per, ps.Burst())
	}
}

func TestZeroAllocs(t *testing.T) {
	l, _ := New(1e6, 10)
	now := int64(0)
	if a := testing.AllocsPerRun(1000, func() {
		now += 1e3
		l.AllowAt(now)
		l.Allow()
		_, _ = l.AllowNAt(now, 2)
		_, _ = l.AllowFracAt(now, 1, 4)
		r, _ := l.ReserveAt(now, 1)
		r.CancelAt(now)
		_ = l.TokensAt(now)
		_ = l.Tokens()
		ln := l.TakeUpToAt(now, 3)
		l.GiveBack(&ln, 1)
	}); a != 0 {
		t.Fatalf("%v allocs per run", a)
	}
}

func satAdd(a, b int64) int64 {
	if s := a + b; s >= a {
		return s
	}
	return math.MaxInt64
}

// TestLayout: the state has a cache line to itself within its cell, so
// admissions on other cores do not evict the parameters every decision reads.
func TestLayout(t *testing.T) {
	var c cell
	limittest.OwnLine(t, "bucket cell", unsafe.Sizeof(c), unsafe.Offsetof(c.next)+unsafe.Sizeof(c.next), unsafe.Offsetof(c.state), unsafe.Sizeof(c.state))
}
