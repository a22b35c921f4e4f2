package gcrastep

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cellrate/cellrate/internal/bound"
	"github.com/cellrate/cellrate/internal/race"
	"github.com/cellrate/cellrate/limit"
)

// op is one request of a schedule.
type op struct{ now, n int64 }

// admitted is an admitted request, for the bound check.
type admitted = op

// checkBound checks the admissions against burst + events*t/period.
func checkBound(t testing.TB, adm []admitted, events int64, period time.Duration, burst int64) {
	t.Helper()
	uses := make([]bound.Use, len(adm))
	for i, a := range adm {
		uses[i] = bound.Use{At: a.now, Cost: a.n}
	}
	if err := bound.Check(uses, uint64(burst), uint64(events), uint64(period)); err != nil {
		t.Fatal(err)
	}
}

// schedule draws a random sequence of requests: mostly small steps forward,
// some stale (backwards) now values, some jumps of years, some runs near the
// ends of the int64 range.
func schedule(rng *rand.Rand, T int64, burst int64, count int) []op {
	now := rng.Int64() - math.MaxInt64/2
	switch rng.IntN(8) {
	case 0:
		now = math.MinInt64 + rng.Int64N(1<<20)
	case 1:
		now = math.MaxInt64 - rng.Int64N(min(max(T, 1)*burst, 1<<60)*4+1<<20) // T*burst <= 2^62: *4 could wrap
	}
	ops := make([]op, count)
	for i := range ops {
		switch k := rng.IntN(100); {
		case k < 60:
			now = satAdd(now, rng.Int64N(T+1))
		case k < 75:
			now = satAdd(now, -rng.Int64N(T*burst+2))
		case k < 80:
			now = satAdd(now, rng.Int64N(1<<62)) // up to 146 years
		case k < 82:
			now = satAdd(now, -rng.Int64N(1<<62))
		}
		n := int64(1)
		switch rng.IntN(10) {
		case 0:
			n = rng.Int64N(burst + 1)
		case 1:
			n = 0
		}
		ops[i] = op{now, n}
	}
	return ops
}

func satAdd(a, b int64) int64 {
	s := a + b
	if (b > 0 && s < a) || (b < 0 && s > a) {
		if b > 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return s
}

// runAgainstRef runs ops through Step and the model, comparing every
// Result, and returns the admissions.
func runAgainstRef(t testing.TB, events int64, period time.Duration, burst int64, ops []op) []admitted {
	t.Helper()
	ps, err := NewParams(events, period, burst)
	if err != nil {
		t.Fatal(err)
	}
	m := newRef(events, period, burst)
	var tat State
	var adm []admitted
	for i, o := range ops {
		next, got, err := ps.Step(tat, o.now, o.n)
		if err != nil {
			t.Fatalf("op %d %+v: %v", i, o, err)
		}
		want := m.step1(o.now, o.n)
		if got != want {
			t.Fatalf("%d per %v burst %d, op %d %+v (tat %d): got %+v, model %+v",
				events, period, burst, i, o, tat, got, want)
		}
		if !got.OK && next != tat {
			t.Fatalf("op %d: a denial changed the state", i)
		}
		tat = next
		checkTokens(t, ps, tat, m, o.now)
		if got.OK && o.n > 0 {
			adm = append(adm, admitted(o))
		}
	}
	return adm
}

type rateCase struct {
	events int64
	period time.Duration
	burst  int64
}

var rateCases = []rateCase{
	{5, time.Second, 10},
	{3, time.Second, 1},         // T = 333333333.33 ns
	{1, 3 * time.Second, 4},     // T = 3 s
	{2, 3, 7},                   // T = 1.5 ns: steps of 1.5 ns
	{7, 10, 3},                  // T = 1.43 ns
	{1, 1, 1},                   // one per ns
	{999983, time.Second, 1000}, // prime events
	{3, 1e14 + 1, 2},            // T a third of a day and a bit
	{1, 1 << 61, 2},             // burst*T = 2^62 exactly
}

func TestStepMatchesModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	runs := 20
	if race.Enabled { // pure: see package race
		runs = 2
	}
	for _, c := range rateCases {
		T := int64(c.period) / c.events
		for range runs {
			ops := schedule(rng, T, c.burst, 400)
			adm := runAgainstRef(t, c.events, c.period, c.burst, ops)
			checkBound(t, adm, c.events, c.period, c.burst)
		}
	}
}

func TestRandomRates(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	rates := 300
	if race.Enabled { // pure: see package race
		rates = 60
	}
	for range rates {
		events := 1 + rng.Int64N(1<<rng.IntN(40))
		period := time.Duration(events + rng.Int64N(events*(1+rng.Int64N(1<<20))))
		burst := 1 + rng.Int64N(1<<rng.IntN(12))
		if _, err := NewParams(events, period, burst); err != nil {
			continue
		}
		ops := schedule(rng, int64(period)/events, burst, 200)
		adm := runAgainstRef(t, events, period, burst, ops)
		checkBound(t, adm, events, period, burst)
	}
}

// TestRateParams: the float rate is read as the nearest small fraction of
// events per second.
func TestRateParams(t *testing.T) {
	for _, c := range []struct {
		rate   float64
		events int64
		period time.Duration
	}{{0.5, 1, 2 * time.Second}, {1.0 / 3, 1, 3 * time.Second}, {100, 100, time.Second}, {1e9, 1, 1}, {3e8, 3, 10}} {
		got, err := RateParams(c.rate, 4)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := NewParams(c.events, c.period, 4)
		if got != want {
			t.Errorf("rateParams(%v) = %+v, want %+v", c.rate, got, want)
		}
	}
}

func FuzzStep(f *testing.F) {
	f.Add(int64(3), int64(time.Second), int64(1), uint64(1))
	f.Add(int64(2), int64(3), int64(7), uint64(2))
	f.Add(int64(1), int64(1), int64(1), uint64(3))
	f.Add(int64(999983), int64(time.Second), int64(1000), uint64(4))
	f.Fuzz(func(t *testing.T, events, period, burst int64, seed uint64) {
		if _, err := NewParams(events, time.Duration(period), burst); err != nil {
			t.Skip()
		}
		if burst > 1<<16 {
			t.Skip() // keeps the model's schedule meaningful
		}
		rng := rand.New(rand.NewPCG(seed, seed>>7))
		ops := schedule(rng, period/events, burst, 300)
		adm := runAgainstRef(t, events, time.Duration(period), burst, ops)
		checkBound(t, adm, events, time.Duration(period), burst)
	})
}

// TestRetryAfterNearNever: a wait just over math.MaxInt64 ns (a stale now
// about 292 years before a TAT near the end of time) is limit.Never, as
// the model says, not a wait rounded up past the int64 range; a wait just
// under it is the model's whole ns. The requests straddle the boundary, and
// Reserve refuses exactly those whose wait is Never.
func TestRetryAfterNearNever(t *testing.T) {
	for _, c := range []rateCase{{3, time.Second, 1}, {2, 3, 7}, {7, 10, 3}} {
		ps, _ := NewParams(c.events, c.period, c.burst)
		m := newRef(c.events, c.period, c.burst)
		s, r, _ := ps.Step(0, 1<<62, c.burst)
		if want := m.step1(1<<62, c.burst); !r.OK || r != want {
			t.Fatalf("%+v: the full burst at 2^62: %+v, model %+v", c, r, want)
		}
		// A request of 1 waits tat + T - b*T - now: at or past 2^63-1 ns
		// from the now u ns after math.MinInt64 with u = floor(x) - (2^63-1).
		x := new(big.Rat).Sub(m.tat, new(big.Rat).Mul(m.T, big.NewRat(c.burst-1, 1)))
		if x.IsInt() {
			t.Fatalf("%+v: the wait is a whole ns: choose another now", c)
		}
		u0 := floorRat(x)
		u0.Sub(u0, big.NewInt(math.MaxInt64))
		var nevers, longest int
		for d := int64(-2); d <= 2; d++ {
			now := new(big.Int).Add(u0, big.NewInt(d+math.MinInt64)).Int64()
			_, r, _ := ps.Step(s, now, 1)
			probe := *m
			if want := probe.step1(now, 1); r != want {
				t.Fatalf("%+v: Step at %d: %+v, model %+v", c, now, r, want)
			}
			// Reserve acts at now+RetryAfter, unless that wait is Never
			// (then it is refused, as Step's RetryAfter says).
			next, wait, ok, _ := ps.Reserve(s, now, 1)
			switch r.RetryAfter {
			case limit.Never:
				nevers++
				if ok || next != s {
					t.Fatalf("%+v: Reserve at %d with a wait of Never: %d, wait %d, ok %v", c, now, next, wait, ok)
				}
			case math.MaxInt64 - 1:
				longest++
				if !ok || wait != r.RetryAfter {
					t.Fatalf("%+v: Reserve at %d: wait %d, ok %v, want %d", c, now, wait, ok, r.RetryAfter)
				}
			}
		}
		// Waits of 2^63+1+f down to 2^63-3+f ns (0 < f < 1): the first
		// four round up past or to MaxInt64, Never; the last to MaxInt64-1.
		if nevers != 4 || longest != 1 {
			t.Fatalf("%+v: %d waits of Never and %d of MaxInt64-1 ns, want 4 and 1", c, nevers, longest)
		}
	}
}

// TestReserveMatchesModel: a reservation is the model's admission at now +
// wait, where wait is the model's RetryAfter; the bound holds with reserved
// events counted at their time to act, on the schedules of
// TestStepMatchesModel.
func TestReserveMatchesModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, c := range rateCases {
		T := int64(c.period) / c.events
		for range 4 {
			reserveAgainstRef(t, c, rng, schedule(rng, T, c.burst, 300))
		}
	}
}

// reserveAgainstRef runs ops through Step, Reserve and Undo (of the last
// reservation, when nothing came after it), against the model, and checks
// the bound with reserved events counted at their time to act.
func reserveAgainstRef(t *testing.T, c rateCase, rng *rand.Rand, ops []op) {
	t.Helper()
	ps, err := NewParams(c.events, c.period, c.burst)
	if err != nil {
		t.Fatal(err)
	}
	m := newRef(c.events, c.period, c.burst)
	var s State
	var adm []admitted
	var undo struct {
		before, after State
		model         big.Rat
		ok            bool
	}
	for i, o := range ops {
		switch k := rng.IntN(6); {
		case k < 3:
			next, r, _ := ps.Step(s, o.now, o.n)
			if want := m.step1(o.now, o.n); r != want {
				t.Fatalf("%+v op %d: Step %+v, model %+v", c, i, r, want)
			}
			if r.OK && next != s {
				s, undo.ok = next, false
				adm = append(adm, admitted(o))
			}
			continue
		case k == 3 && undo.ok:
			// Give the last reservation back: the state and the model go
			// back to before it, and its events leave the admissions.
			next, ok := ps.Undo(s, undo.before, undo.after)
			if !ok || next != undo.before {
				t.Fatalf("%+v op %d: Undo of the last reservation: %d %v", c, i, next, ok)
			}
			s, undo.ok = next, false
			m.tat.Set(&undo.model)
			adm = adm[:len(adm)-1]
			continue
		}
		next, wait, ok, err := ps.Reserve(s, o.now, o.n)
		if err != nil {
			t.Fatal(err)
		}
		probe := *m
		want := probe.step1(o.now, o.n)
		var before big.Rat
		before.Set(m.tat)
		wantOK := want.OK || want.RetryAfter != limit.Never && o.now <= math.MaxInt64-int64(want.RetryAfter)
		if want.OK {
			m.step1(o.now, o.n)
		} else if wantOK {
			if r := m.step1(o.now+int64(want.RetryAfter), o.n); !r.OK {
				wantOK = false // the TAT would pass the end of time
			}
		}
		if ok != wantOK || ok && wait != want.RetryAfter {
			t.Fatalf("%+v op %d %+v: Reserve wait %d ok %v, model %+v", c, i, o, wait, ok, want)
		}
		if !ok {
			if next != s {
				t.Fatal("a refused reservation changed the state")
			}
			continue
		}
		if next != s {
			undo.before, undo.after, undo.ok = s, next, true
			undo.model.Set(&before)
			adm = append(adm, admitted{o.now + int64(wait), o.n})
		}
		s = next
		checkTokens(t, ps, s, m, o.now) // below 0 while reservations are owed
	}
	checkBound(t, adm, c.events, c.period, c.burst)
}

func FuzzReserve(f *testing.F) {
	f.Add(int64(3), int64(time.Second), int64(2), uint64(1))
	f.Add(int64(2), int64(3), int64(7), uint64(2))
	f.Add(int64(1), int64(1<<61), int64(2), uint64(3))
	f.Fuzz(func(t *testing.T, events, period, burst int64, seed uint64) {
		if _, err := NewParams(events, time.Duration(period), burst); err != nil || burst > 1<<16 {
			t.Skip()
		}
		rng := rand.New(rand.NewPCG(seed, seed>>7))
		c := rateCase{events, time.Duration(period), burst}
		reserveAgainstRef(t, c, rng, schedule(rng, period/events, burst, 200))
	})
}

// TestNaiveRefundBreaksBound is why Member.Refund takes a Receipt: giving
// n events back by pulling the TAT back n intervals, after another caller
// was admitted at a later time, passes the bound (burst 2, 1/s: three
// events within 0.1 s).
func TestNaiveRefundBreaksBound(t *testing.T) {
	ps, _ := NewParams(1, time.Second, 2)
	var s State
	s, _, _ = ps.Step(s, 0, 1) // A, to be refunded
	var uses []bound.Use
	s, r, _ := ps.Step(s, 9e8, 1) // B
	if !r.OK {
		t.Fatal("B denied")
	}
	uses = append(uses, bound.Use{At: 9e8, Cost: 1})
	s -= State(ps.J) // the naive refund of A
	for _, now := range []int64{9e8, 1e9} {
		if s, r, _ = ps.Step(s, now, 1); r.OK {
			uses = append(uses, bound.Use{At: now, Cost: 1})
		}
	}
	if bound.Check(uses, 2, 1, uint64(time.Second)) == nil {
		t.Fatal("the naive refund kept the bound: the Receipt would not be needed")
	}
}

// reserveCase is a rate and burst, and the cost n of each reservation.
type reserveCase struct {
	events int64
	period time.Duration
	burst  int64
	n      int64
}

func chainLength() int {
	if race.Enabled { // pure: see package race
		return 3000
	}
	return 30000
}

// TestWaitingReservationsKeepRate: reservations of n < burst that wait keep
// the limiter busy (their time to act is n*T or more before the TAT), so
// they keep the exact rate with a fractional T: the k-th waiting
// reservation acts within 1 ns (the whole-ns rounding up of its time) of
// k*n*T after the first one that waited, for every k: no drift.
func TestWaitingReservationsKeepRate(t *testing.T) {
	for _, c := range []reserveCase{
		{3, time.Second, 2, 1}, // T = 333333333.33 ns
		{3, time.Second, 5, 4},
		{2, 3, 2, 1}, // T = 1.5 ns: steps of 1.5 ns
		{2, 3, 7, 3},
		{7, 10, 3, 2},       // T = 1.43 ns
		{3, 1e14 + 1, 2, 1}, // a third of a day and a bit
		{999983, time.Second, 3, 2},
	} {
		for _, queued := range []bool{true, false} {
			acts, waits := chainReservations(t, c, 1e12+1, chainLength(), queued)
			first := -1
			for k, a := range acts {
				if waits[k] == 0 {
					continue
				}
				if first < 0 {
					first = k
				}
				// |events*(act_k - act_first) - (k-first)*n*period| < events
				d := new(big.Int).Mul(big.NewInt(a-acts[first]), big.NewInt(c.events))
				d.Sub(d, new(big.Int).Mul(big.NewInt(int64(k-first)*c.n), big.NewInt(int64(c.period))))
				if d.CmpAbs(big.NewInt(c.events)) >= 0 {
					t.Fatalf("%+v queued %v: reservation %d acts at %d, %d after the first waiting one (%d): off k*n*T by %v/%d ns",
						c, queued, k, a, a-acts[first], first, d, c.events)
				}
			}
		}
	}
}

// TestWholeBurstReservations: a reservation of the whole burst (n ==
// burst: every reservation at burst 1) can act only when the limiter is
// full again, at the TAT rounded up to a whole ns, so each one is an idle
// restart (see the package doc). No limiter with the exact bound can keep
// the rate then when n*T is not whole: the events of two such reservations
// lie in a closed interval as long as the gap between them, so every gap
// must be at least n*T, and whole-ns gaps of at least n*T drift by
// ceil(n*T) - n*T or more per reservation. The test shows that (the
// schedule without drift breaks the exact bound, and holds it with 1 ns of
// slack) and that the reservations lose at most the restart's step on top:
// each gap is at least n*T and under n*T + step + 1 ns (a step is
// T/floor(T)). With T whole the gaps are exactly n*T.
func TestWholeBurstReservations(t *testing.T) {
	for _, c := range []reserveCase{
		{3, time.Second, 1, 1},
		{2, 3, 1, 1},
		{7, 10, 1, 1},
		{3, time.Second, 3, 3},
		{999983, time.Second, 1, 1},
		{2, 3, 2, 2}, // n*T = 3 ns, whole
		{1, 3, 1, 1}, // T whole
	} {
		ev, per := big.NewInt(c.events), big.NewInt(int64(c.period))
		nper := new(big.Int).Mul(per, big.NewInt(c.n)) // n*T*events
		fl := int64(c.period) / c.events               // floor(T): a step is T/fl
		whole := new(big.Int).Rem(nper, ev).Sign() == 0
		for _, queued := range []bool{true, false} {
			acts, _ := chainReservations(t, c, 1e12+1, chainLength(), queued)
			for k := 1; k < len(acts); k++ {
				gap := big.NewInt(acts[k] - acts[k-1])
				// events*gap >= n*period, and
				// events*gap*fl < n*period*fl + period + events*fl.
				lhs := new(big.Int).Mul(gap, ev)
				if lhs.Cmp(nper) < 0 {
					t.Fatalf("%+v queued %v: gap %d before reservation %d is under n*T", c, queued, gap, k)
				}
				hi := new(big.Int).Mul(nper, big.NewInt(fl))
				hi.Add(hi, per)
				hi.Add(hi, new(big.Int).Mul(ev, big.NewInt(fl)))
				if lhs.Mul(lhs, big.NewInt(fl)).Cmp(hi) >= 0 {
					t.Fatalf("%+v queued %v: gap %d before reservation %d: n*T + a step + 1 ns or more", c, queued, gap, k)
				}
				if c.period%time.Duration(c.events) == 0 && new(big.Int).Mul(gap, ev).Cmp(nper) != 0 {
					t.Fatalf("%+v queued %v: T is whole, gap %d before reservation %d", c, queued, gap, k)
				}
			}
			if whole {
				continue
			}
			// The schedule without drift, act_0 + ceil(k*n*T), breaks the
			// exact bound.
			ideal := make([]bound.Use, 100)
			for k := range ideal {
				q, r := new(big.Int).QuoRem(new(big.Int).Mul(big.NewInt(int64(k)), nper), ev, new(big.Int))
				if r.Sign() != 0 {
					q.Add(q, big.NewInt(1))
				}
				ideal[k] = bound.Use{At: acts[0] + q.Int64(), Cost: c.n}
			}
			if bound.Check(ideal, uint64(c.burst), uint64(c.events), uint64(c.period)) == nil {
				t.Fatalf("%+v: the schedule without drift holds the exact bound", c)
			}
			if err := bound.CheckSlack(ideal, uint64(c.burst), 1, uint64(c.events), uint64(c.period)); err != nil {
				t.Fatalf("%+v: the schedule without drift, with 1 ns of slack: %v", c, err)
			}
		}
	}
}

// chainReservations makes count reservations of c.n from a full limiter
// starting at start: all at start (queued, as many Waits at one instant
// would be), or each at the previous one's time to act (a caller that
// reserves again when it acts). It returns the times to act, and checks
// each against a Limiter driven by AllowNAt at the same times: a
// reservation must be exactly what polling every ns would get, refused at
// act-1 and admitted at act.
func chainReservations(t *testing.T, c reserveCase, start int64, count int, queued bool) (acts, waits []int64) {
	t.Helper()
	ps, err := NewParams(c.events, c.period, c.burst)
	if err != nil {
		t.Fatal(err)
	}
	var s, poll State // poll is stepped as a Limiter's AllowNAt steps its state
	acts, waits = make([]int64, count), make([]int64, count)
	now := start
	for k := range acts {
		next, wait, ok, err := ps.Reserve(s, now, c.n)
		if err != nil || !ok {
			t.Fatalf("%+v: reservation %d refused: %v", c, k, err)
		}
		act := now + int64(wait)
		if wait > 0 {
			if _, r, _ := ps.Step(poll, act-1, c.n); r.OK {
				t.Fatalf("%+v queued %v: reservation %d acts at %d, AllowNAt admits at %d", c, queued, k, act, act-1)
			}
		}
		polled, r, _ := ps.Step(poll, act, c.n)
		if !r.OK {
			t.Fatalf("%+v queued %v: reservation %d acts at %d, AllowNAt refuses then", c, queued, k, act)
		}
		if poll = polled; poll != next {
			t.Fatalf("%+v queued %v: reservation %d: state %d, AllowNAt's %d", c, queued, k, next, poll)
		}
		s, acts[k], waits[k] = next, act, int64(wait)
		if !queued {
			now = act
		}
	}
	uses := make([]bound.Use, min(len(acts), 2000)) // Check is O(n^2)
	for i, a := range acts[:len(uses)] {
		uses[i] = bound.Use{At: a, Cost: c.n}
	}
	if err := bound.Check(uses, uint64(c.burst), uint64(c.events), uint64(c.period)); err != nil {
		t.Fatalf("%+v queued %v: reserved events at their time to act: %v", c, queued, err)
	}
	return acts, waits
}
