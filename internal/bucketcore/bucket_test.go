package bucketcore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/cellrate/cellrate/internal/bound"
	"github.com/cellrate/cellrate/internal/intmath"
	"github.com/cellrate/cellrate/internal/limittest"
	"github.com/cellrate/cellrate/internal/race"
	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/nanotime"
)

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
	l, err := New(sc.events, sc.period, sc.burst)
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
			now = intmath.SatAdd(now, rng.Int64N(T+1))
		case k < 70:
			now -= min(rng.Int64N(T*sc.burst+2), now-math.MinInt64)
		case k < 74:
			now = intmath.SatAdd(now, rng.Int64N(1<<62))
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
			r, err := l.ReserveNAt(now, n)
			mr := m.reserve(now, new(big.Rat).SetInt64(n), new(big.Rat).SetFrac64(maxDeficit, ps.Unit()))
			if err != nil || r.OK != mr.ok || r.Wait != time.Duration(mr.wait) {
				fail("ReserveAt", r, mr)
			}
			if r.OK {
				rs = append(rs, res{r, mr, len(uses)})
				uses = append(uses, use{At: r.done, Cost: n * ps.Unit(), Kind: "reserve"})
			}
		case op < 9 && len(rs) > 0:
			j := rng.IntN(len(rs))
			before := fmt.Sprint(rs[j].r.wrote, rs[j].r.done, rs[j].r.cost, "|", rs[j].m.t, rs[j].m.tok, rs[j].m.done, "|", m.t, m.tok)
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
		l, err := NewRate(c.rate, 1000)
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
	l, _ := NewRate(1, 1) // one token per second
	// Ten costs of 1/10 token empty the bucket exactly.
	for i := range 10 {
		if r, err := l.AllowFracAt(0, 1, 10); err != nil || !r.OK {
			t.Fatalf("cost %d of 1/10 refused: %+v %v", i, r, err)
		}
	}
	r, _ := l.AllowFracAt(0, 1, 10)
	if r.OK || r.RetryAfter != time.Duration(100*time.Millisecond) {
		t.Fatalf("11th tenth: %+v", r)
	}
	ps := l.Params()
	if u, _ := ps.costUnits(1, 3); u != (ps.Unit()+2)/3 {
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
}

// paramErr returns err as a *limit.ParamError, failing t if it is not one.
func paramErr(t *testing.T, what string, err error) *limit.ParamError {
	t.Helper()
	var pe *limit.ParamError
	if !errors.As(err, &pe) {
		t.Fatalf("%s: error %v is not a *limit.ParamError", what, err)
	}
	return pe
}

// TestParamErrors: every refused parameter is a *limit.ParamError naming
// the parameter, its value and the range that fits.
func TestParamErrors(t *testing.T) {
	l, _ := New(1, time.Second, 2)
	for _, c := range []struct {
		what     string
		err      error
		param    string
		value    any
		min, max any
	}{
		{"rate 0", second(NewRate(0, 1)), "rate", 0.0, minRate, maxRate},
		{"rate -1", second(NewRate(-1, 1)), "rate", -1.0, minRate, maxRate},
		{"rate 2^-32", second(NewRate(0x1p-32, 1)), "rate", 0x1p-32, minRate, maxRate},
		{"rate 1e30", second(NewRate(1e30, 1)), "rate", 1e30, minRate, maxRate},
		{"burst 0", second(NewRate(1, 0)), "burst", int64(0), int64(1), int64(maxCap / int64(time.Second))},
		{"burst 3 at 1e-9/s", second(NewRate(1e-9, 3)), "burst", int64(3), int64(1), int64(2)},
		{"burst 2^61+1 at 1/ns", second(New(1, 1, 1<<61+1)), "burst", int64(1<<61 + 1), int64(1), int64(1 << 61)},
		{"events 0", second(New(0, time.Second, 1)), "events", int64(0), int64(1), nil},
		{"period 0", second(New(1, 0, 1)), "period", time.Duration(0), time.Duration(1), nil},
		{"period -1", second(NewParams(1, -1, 1)), "period", time.Duration(-1), time.Duration(1), nil},
		{"zero params", second(NewFromParams(Params{})), "params", Params{}, nil, nil},
		{"nil clock", second(New(1, time.Second, 1, WithClock(nil))), "clock", nanotime.Clock(nil), nil, nil},
		{"den 0", second(l.AllowFracAt(0, 1, 0)), "den", int64(0), int64(1), nil},
		{"den -1 (CostUnits)", second(l.Params().costUnits(1, -1)), "den", int64(-1), int64(1), nil},
		{"SetRate events 0", l.SetRateAt(0, 0, time.Second), "events", int64(0), int64(1), nil},
		{"SetRate too slow for the burst", l.SetRateAt(0, 1, 1<<61), "burst", int64(2), int64(1), int64(1)},
		{"SetBurst 0", l.SetBurstAt(0, 0), "burst", int64(0), int64(1), int64(maxCap / int64(time.Second))},
		{"SetParams zero", l.SetParamsAt(0, Params{}), "params", Params{}, nil, nil},
	} {
		pe := paramErr(t, c.what, c.err)
		if pe.Pkg != "bucket" || pe.Param != c.param || pe.Min != c.min || pe.Max != c.max {
			t.Errorf("%s: %#v, want param %q min %v max %v", c.what, pe, c.param, c.min, c.max)
		}
		if c.param != "clock" && pe.Value != c.value {
			t.Errorf("%s: value %#v, want %#v", c.what, pe.Value, c.value)
		}
		if !strings.HasPrefix(pe.Error(), "bucket: "+c.param) {
			t.Errorf("%s: message %q", c.what, pe.Error())
		}
	}
	// The bounds are the true edges: the values just inside them fit (the
	// slowest rate's token is more units than any full bucket may hold,
	// so it is the burst that is refused there, with Max 0).
	if pe := paramErr(t, "rate min", second(NewRate(minRate, 1))); pe.Param != "burst" || pe.Max != int64(0) {
		t.Errorf("the slowest rate: %v", pe)
	}
	for _, ok := range []error{
		second(NewRate(maxRate, 1)), second(NewRate(1e-9, 2)), second(New(1, 1, 1<<61)),
	} {
		if ok != nil {
			t.Errorf("an edge value was refused: %v", ok)
		}
	}
	// A refused setter changes nothing.
	if ev, per := l.Params().Rate(); ev != 1 || per != time.Second || l.Params().Burst() != 2 {
		t.Fatalf("params after refused setters: %d per %v burst %d", ev, per, l.Params().Burst())
	}
}

// second returns the error of a two-result call.
func second[T any](_ T, err error) error { return err }

func TestErrors(t *testing.T) {
	l, _ := NewRate(1, 2)
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
	if _, err := l.ReserveNAt(0, 3); !errors.Is(err, limit.ErrCostExceedsBurst) {
		t.Errorf("Reserve 3: %v", err)
	}
	if err := l.WaitN(context.Background(), 3); !errors.Is(err, limit.ErrCostExceedsBurst) {
		t.Errorf("Wait 3: %v", err)
	}
}

func TestStaleNowCreatesNothing(t *testing.T) {
	l, _ := NewRate(1, 3)
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
	if r.OK || r.RetryAfter != time.Duration(2*time.Second) {
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
	l, _ := New(1, time.Nanosecond, 4)
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
	l, _ := New(1, time.Second, 1)
	l.AllowAt(0)
	a, _ := l.ReserveNAt(0, 1)
	if a.Wait != time.Second {
		t.Fatalf("wait %d", a.Wait)
	}
	b, _ := l.ReserveNAt(0, 1)
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
	c, _ := l.ReserveNAt(0, 1)
	if c.CancelAt(int64(c.Wait + 1)) {
		t.Fatal("cancelled after its time to act")
	}
}

func TestGiveBackRule(t *testing.T) {
	l, _ := New(1, time.Second, 10)
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
		l, _ := New(sc.events, sc.period, sc.burst)
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
						r, _ := l.ReserveNAt(now, 1)
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
	l, _ := New(1000, time.Millisecond, 50)
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
	if err := l.SetRate(25, 2*time.Second); err != nil {
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
	l, _ := NewRate(1e6, 10)
	now := int64(0)
	if a := testing.AllocsPerRun(1000, func() {
		now += 1e3
		l.AllowAt(now)
		l.Allow()
		_, _ = l.AllowNAt(now, 2)
		_, _ = l.AllowFracAt(now, 1, 4)
		r, _ := l.ReserveNAt(now, 1)
		r.CancelAt(now)
		_ = l.TokensAt(now)
		_ = l.Tokens()
		ln := l.TakeUpToAt(now, 3)
		l.GiveBack(&ln, 1)
	}); a != 0 {
		t.Fatalf("%v allocs per run", a)
	}
}

// TestLayout: the state has a cache line to itself within its cell, so
// admissions on other cores do not evict the parameters every decision reads.
func TestLayout(t *testing.T) {
	var g gen
	limittest.OwnLine(t, "bucket gen", unsafe.Sizeof(g), unsafe.Offsetof(g.next)+unsafe.Sizeof(g.next), unsafe.Offsetof(g.state), unsafe.Sizeof(g.state))
}

// TestEndsOfTime checks each place the package adds to a time or takes a
// difference of times at math.MinInt64 and math.MaxInt64: the refill of
// a step, a take, a reservation's act time (refused past the end), convert
// and the reads.
func TestEndsOfTime(t *testing.T) {
	const lo, hi = math.MinInt64, math.MaxInt64
	ps, _ := NewParams(1, time.Second, 2)
	sec := int64(time.Second)

	// Refill across the whole range: a bucket emptied at MinInt64 is full
	// at MaxInt64, and one emptied at MaxInt64 gets nothing at MinInt64.
	s, _, _ := ps.Step(State{}, lo, 2)
	if got := ps.Remaining(s, hi); got != 2 {
		t.Fatalf("emptied at MinInt64: %d tokens at MaxInt64, want 2", got)
	}
	s, _, _ = ps.Step(State{}, hi, 2)
	if _, r, _ := ps.Step(s, lo, 1); r.OK || r.RetryAfter != limit.Never || ps.Remaining(s, lo) != 0 {
		t.Fatalf("emptied at MaxInt64, at MinInt64: %+v, %d tokens", r, ps.Remaining(s, lo))
	}
	if got := ps.Tokens(s, lo); got >= 0 {
		t.Fatalf("Tokens at MinInt64 after emptying at MaxInt64 = %v, want negative", got)
	}
	if next, n := ps.TakeUpTo(State{}, hi, 5); n != 2 || ps.Remaining(next, hi) != 0 {
		t.Fatalf("TakeUpTo at MaxInt64 took %d", n)
	}
	if next, n := ps.TakeUpTo(State{}, lo, 1); n != 1 || ps.Remaining(next, lo) != 1 {
		t.Fatalf("TakeUpTo at MinInt64 took %d", n)
	}

	// A reservation acts at now+Wait: at the end of time it is refused
	// exactly when that passes MaxInt64.
	empty, _, _ := ps.Step(State{}, hi-sec, 2)
	if _, r, _ := ps.reserve(empty, hi-sec, 1); !r.OK || r.Wait != time.Duration(sec) {
		t.Fatalf("reserve acting at exactly MaxInt64: %+v", r)
	}
	if next, r, _ := ps.reserve(empty, hi-sec, 2); r.OK || r.Wait != limit.Never || next != empty {
		t.Fatalf("reserve acting past MaxInt64: %+v, state %v", r, next)
	}
	if _, r, _ := ps.reserve(State{}, hi, 2); !r.OK || r.Wait != 0 {
		t.Fatalf("reserve of what is there at MaxInt64: %+v", r)
	}
	if _, r, _ := ps.reserve(State{}, lo, 2); !r.OK || r.Wait != 0 {
		t.Fatalf("reserve at MinInt64: %+v", r)
	}
	l, _ := New(1, time.Second, 2)
	l.AllowNAt(hi, 2)
	if r, _ := l.ReserveNAt(hi, 1); r.OK || r.Wait != limit.Never {
		t.Fatalf("Limiter reserve past the end: %+v", r)
	}
	if r, _ := l.ReserveNAt(lo, 1); r.OK {
		t.Fatalf("Limiter reserve at MinInt64 behind a bucket emptied at MaxInt64: %+v", r)
	}

	// Convert carries a state at either end.
	to, _ := NewParams(3, time.Second, 4)
	if got := to.Remaining(ps.convert(State{}, hi, to), hi); got != 2 {
		t.Fatalf("Convert at MaxInt64: %d tokens, want 2", got)
	}
	if got := ps.convert(s, lo, to); got != (State{s.T, 4 * to.cap / 4}) {
		t.Fatalf("Convert of a bucket emptied at MaxInt64 at a stale MinInt64: %v, want empty at MaxInt64", got)
	}
}

// TestPureStepsMatchLimiter drives a Limiter and a plain State through the
// same random operations, the State by the pure steps alone (Step for
// AllowAt and AllowNAt,
// StepUnits, TakeUpTo, GiveBack, Reserve, Convert, Remaining, Tokens): the
// results and the states must agree after every one. With the Limiter
// checked against the model (TestScheduleMatchesModel), the steps are too,
// on a State kept anywhere.
func TestPureStepsMatchLimiter(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	runs := 40
	if race.Enabled { // one goroutine: see package race
		runs = 10
	}
	for _, sc := range cases {
		for range runs {
			l, _ := New(sc.events, sc.period, sc.burst)
			ps := l.Params()
			var s State
			type loan struct {
				l     Loan
				wrote State
			}
			type res struct {
				r     Reservation
				wrote State
				units uint64
			}
			var loans []loan
			var rs []res
			now := rng.Int64() - math.MaxInt64/2
			T := max(int64(sc.period)/sc.events, 1)
			for i := range 300 {
				switch k := rng.IntN(10); {
				case k < 6:
					now = intmath.SatAdd(now, rng.Int64N(T+1))
				case k < 8:
					now = intmath.SatAdd(now, -rng.Int64N(T*sc.burst+2))
				case k < 9:
					now = intmath.SatAdd(now, rng.Int64N(1<<62)-1<<61)
				}
				fail := func(what string, got, want any) {
					t.Helper()
					t.Fatalf("%+v op %d at %d, %s: limiter %+v, pure %+v", sc, i, now, what, got, want)
				}
				switch op := rng.IntN(10); op {
				case 9:
					got := l.AllowAt(now)
					next, want, _ := ps.Step(s, now, 1)
					s = next
					if got != want.OK {
						fail("AllowAt", got, want)
					}
				case 0:
					n := rng.Int64N(ps.Burst() + 2)
					got, gerr := l.AllowNAt(now, n)
					next, want, werr := ps.Step(s, now, n)
					s = next
					if got != want || gerr != werr {
						fail("Step", got, want)
					}
				case 1:
					den := 1 + rng.Int64N(100)
					num := rng.Int64N(ps.Burst()*den + 1)
					got, _ := l.AllowFracAt(now, num, den)
					cost, _ := ps.costUnits(num, den)
					next, want := ps.stepUnits(s, now, cost)
					s = next
					if got != want {
						fail("StepUnits", got, want)
					}
				case 2:
					k := rng.Int64N(ps.Burst() + 2)
					ln := l.TakeUpToAt(now, k)
					next, m := ps.TakeUpTo(s, now, k)
					s = next
					if ln.N != m {
						fail("TakeUpTo", ln.N, m)
					}
					if m > 0 {
						loans = append(loans, loan{ln, next})
					}
				case 3:
					if len(loans) == 0 {
						continue
					}
					j := rng.IntN(len(loans))
					k := rng.Int64N(loans[j].l.N + 1)
					kk := min(k, loans[j].l.N)
					got := l.GiveBack(&loans[j].l, k)
					var want int64
					if kk > 0 {
						s, want = ps.giveBackLoan(s, loans[j].wrote, kk)
					}
					if got != want {
						fail("GiveBack", got, want)
					}
				case 4:
					n := rng.Int64N(ps.Burst() + 1)
					r, _ := l.ReserveNAt(now, n)
					next, want, _ := ps.reserve(s, now, n)
					if r.OK != want.OK || r.Wait != want.Wait || (r.OK && r.cost != uint64(want.Units)) {
						fail("Reserve", r, want)
					}
					s = next
					if r.OK {
						rs = append(rs, res{r, next, uint64(want.Units)})
					}
				case 5:
					if len(rs) == 0 {
						continue
					}
					j := rng.IntN(len(rs))
					wantOK := rs[j].r.OK && rs[j].units != 0 && now <= rs[j].r.done
					got := rs[j].r.CancelAt(now)
					if wantOK {
						s, wantOK = giveBack(s, rs[j].wrote, rs[j].units)
					}
					if got != wantOK {
						fail("cancel", got, wantOK)
					}
				case 6:
					nps, err := NewParams(1+rng.Int64N(1000), time.Duration(1+rng.Int64N(int64(time.Second))), 1+rng.Int64N(20))
					if err != nil {
						continue
					}
					if err := l.SetParamsAt(now, nps); err != nil {
						t.Fatal(err)
					}
					s = ps.convert(s, now, nps)
					ps = nps
					// Loans and reservations of the old Params give back
					// nothing on the Limiter (its old generation is
					// retired); the pure steps have no generations.
					loans, rs = nil, nil
					T = max(int64(ps.Unit())/max(1, int64(ps.e)), 1)
				case 7:
					if got, want := l.RemainingAt(now), ps.Remaining(s, now); got != want {
						fail("Remaining", got, want)
					}
				case 8:
					if got, want := l.TokensAt(now), ps.Tokens(s, now); got != want {
						fail("Tokens", got, want)
					}
				}
				if g, ls := l.live(); ls != s || g.ps != ps {
					fail("state", ls, s)
				}
			}
		}
	}
}

// TestRefund: a refund right after its admission restores the state before
// it exactly; after any other decision, a SetParams or at the end of time
// it gives back nothing.
func TestRefund(t *testing.T) {
	l, _ := New(1, time.Second, 5)
	before, _ := l.live()
	_, bs := l.live()
	r, rc, err := l.TakeAt(0, 3)
	if err != nil || !r.OK || rc.N != 3 {
		t.Fatalf("TakeAt: %+v %+v %v", r, rc, err)
	}
	l.Refund(rc)
	if g, s := l.live(); g != before || s != bs {
		t.Fatalf("after the refund: state %v, want %v", s, bs)
	}
	// Another admission in between: nothing given back.
	_, rc, _ = l.TakeAt(0, 2)
	l.AllowAt(0)
	l.Refund(rc)
	if got := l.RemainingAt(0); got != 2 {
		t.Fatalf("refund after a later admission: %d left, want 2", got)
	}
	// Zero receipts (a denial, n = 0) refund nothing.
	_, rc0, _ := l.TakeAt(0, 0)
	_, rcd, _ := l.TakeAt(0, 5)
	if rc0 != (limit.Receipt{}) || rcd != (limit.Receipt{}) {
		t.Fatalf("receipts of n=0 and of a denial: %+v %+v", rc0, rcd)
	}
	l.Refund(rc0)
	l.Refund(rcd)
	if got := l.RemainingAt(0); got != 2 {
		t.Fatalf("zero receipts changed the bucket: %d left", got)
	}

	// A SetParams in between: 1 token per second, then 3 per second with
	// the same unit and burst, set at the admission's now. The new state
	// would equal the admission's after but for Convert's 1ns: restoring
	// the state before the admission under the new rate would show 3
	// tokens at 1s, where exactness gives 1 (refilled at the old rate).
	sec := int64(time.Second)
	l, _ = New(1, time.Second, 5)
	l.AllowNAt(0, 5)
	_, rc, _ = l.TakeAt(sec, 1)
	fast, _ := NewParams(3, time.Second, 5)
	if fast.Unit() != l.Params().Unit() {
		t.Fatal("setup: the units differ")
	}
	l.SetParamsAt(sec, fast)
	l.Refund(rc)
	if got := l.RemainingAt(sec + 1); got != 0 {
		t.Fatalf("refund across a SetParams: %d tokens at 1s, want 0 (the token stays taken)", got)
	}

	// The end of time.
	l, _ = New(1, time.Second, 5)
	_, rc, _ = l.TakeAt(math.MaxInt64, 1)
	l.Refund(rc)
	if got := l.RemainingAt(math.MaxInt64); got != 4 {
		t.Fatalf("refund at the end of time: %d left, want 4", got)
	}
}

// TestConcurrentRefund: goroutines take and refund at once on one bucket,
// with a shared clock; the admissions not refunded stay within the bound.
func TestConcurrentRefund(t *testing.T) {
	l, _ := New(3, time.Microsecond, 4)
	ps := l.Params()
	var clock atomic.Int64
	const G = 6
	iters := 5000
	if testing.Short() {
		iters = 2000
	}
	per := make([][]use, G)
	var wg sync.WaitGroup
	for g := range G {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 13))
			var held []limit.Receipt
			for range iters {
				now := clock.Add(rng.Int64N(300))
				n := 1 + rng.Int64N(2)
				r, rc, _ := l.TakeAt(now, n)
				if !r.OK {
					continue
				}
				u := use{At: now, Cost: n * ps.Unit(), Kind: "take"}
				switch {
				case g%2 == 0 && rng.IntN(2) == 0:
					l.Refund(rc) // at once: usually exact
					continue
				case g%2 == 1 && rng.IntN(4) == 0:
					// Later, after this goroutine's next decisions: usually
					// nothing is given back. The caller does not use a
					// refunded admission either way.
					held = append(held, rc)
					continue
				}
				if len(held) > 0 && rng.IntN(3) == 0 {
					l.Refund(held[0])
					held = held[1:]
				}
				per[g] = append(per[g], u)
			}
		})
	}
	wg.Wait()
	checkBound(t, slices.Concat(per...), ps)
}
