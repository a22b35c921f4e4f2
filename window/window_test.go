package window

import (
	"cmp"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/cellrate/cellrate/atomic128"
	"github.com/cellrate/cellrate/internal/bound"
	"github.com/cellrate/cellrate/internal/limittest"
	"github.com/cellrate/cellrate/internal/race"
	"github.com/cellrate/cellrate/limit"
)

func TestNewValidates(t *testing.T) {
	for _, c := range []struct {
		limit    int64
		win      time.Duration
		param    string
		value    any
		min, max any
	}{
		{0, time.Second, "limit", int64(0), int64(1), int64(MaxLimit)},
		{-1, time.Second, "limit", int64(-1), int64(1), int64(MaxLimit)},
		{MaxLimit + 1, time.Second, "limit", int64(MaxLimit + 1), int64(1), int64(MaxLimit)},
		{1, 0, "window", time.Duration(0), time.Duration(1), nil},
		{1, -time.Second, "window", -time.Second, time.Duration(1), nil},
	} {
		l, err := New(c.limit, c.win)
		var pe *limit.ParamError
		if !errors.As(err, &pe) || l != nil || pe.Pkg != "window" || pe.Param != c.param || pe.Value != c.value || pe.Min != c.min || pe.Max != c.max {
			t.Errorf("New(%d, %v) = %v, %#v; want %s %v in [%v, %v]", c.limit, c.win, l, err, c.param, c.value, c.min, c.max)
		}
	}
	for _, c := range []struct {
		limit int64
		win   time.Duration
	}{{1, 1}, {MaxLimit, math.MaxInt64}} {
		if _, err := New(c.limit, c.win); err != nil {
			t.Errorf("New(%d, %v): %v", c.limit, c.win, err)
		}
	}
	var pe *limit.ParamError
	if _, err := New(1, 1, WithClock(nil)); !errors.As(err, &pe) || pe.Param != "clock" {
		t.Errorf("WithClock(nil): %v", err)
	}
	if _, err := NewFromParams(Params{}); !errors.As(err, &pe) || pe.Param != "params" {
		t.Errorf("NewFromParams(Params{}): %v", err)
	}
}

func TestZeroLimiterAdmitsNothing(t *testing.T) {
	var l Limiter
	if l.AllowAt(1) {
		t.Fatal("zero Limiter admitted a unit")
	}
	if r, err := l.AllowNAt(1, 1); r.OK || !errors.Is(err, limit.ErrCostExceedsBurst) {
		t.Fatalf("AllowNAt(1, 1) = %+v, %v", r, err)
	}
	if r, err := l.AllowNAt(1, 0); !r.OK || err != nil || l.EstimateAt(1) != 0 {
		t.Fatalf("AllowNAt(1, 0) = %+v, %v", r, err)
	}
}

func TestPackRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 10000 {
		s := State{Start: int64(rng.Uint64()), Prev: rng.Uint32(), Cur: rng.Uint32()}
		if got := Unpack(Pack(s)); got != s {
			t.Fatalf("Unpack(Pack(%+v)) = %+v", s, got)
		}
	}
}

// TestBackwardsNeverCreatesCapacity: from any reachable state, a decision
// at an earlier time admits no more than one at a later time.
func TestBackwardsNeverCreatesCapacity(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 200 {
		sc := newSchedule(rng, true)
		p, _ := NewParams(sc.limit, sc.win)
		var s State
		for range 200 {
			now, n := sc.next()
			if n < 1 || n > sc.limit {
				continue
			}
			if next, r, _ := p.Step(s, now, n); r.OK {
				s = next
			}
			earlier := now - rng.Int64N(int64(sc.win)*3+1)
			_, later, _ := p.Step(s, now, n)
			_, before, _ := p.Step(s, earlier, n)
			_, laterLeft, _ := p.Step(s, now, 0)
			_, beforeLeft, _ := p.Step(s, earlier, 0)
			if before.OK && !later.OK || beforeLeft.Remaining > laterLeft.Remaining {
				t.Fatalf("state %+v, n %d: at %d %+v, at later %d %+v", s, n, earlier, before, now, later)
			}
		}
	}
}

// TestBoundStaleTimes checks the bound over the times callers pass, stale,
// repeated and out of order: at most 2*Limit + Limit*T/W units at times in
// any closed interval of length T. Half the runs go through a Limiter's
// AllowAt and AllowNAt, half through Step.
func TestBoundStaleTimes(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	worst := 0.0
	runs := 200
	if testing.Short() {
		runs = 40
	}
	for run := range runs {
		l := 2 + rng.Int64N(30)
		win := time.Duration(1 + rng.Int64N(1<<40))
		lim, err := New(l, win)
		if err != nil {
			t.Fatal(err)
		}
		var (
			s    State
			uses []bound.Use
		)
		clock := rng.Int64N(1<<61) - 1<<60
		for range 400 {
			switch k := rng.IntN(8); {
			case k < 4:
				clock += rng.Int64N(int64(win)/8 + 1)
			case k < 6:
				clock += rng.Int64N(4*int64(win) + 1)
			}
			now := clock
			switch k := rng.IntN(8); {
			case k < 2:
				now -= rng.Int64N(2*int64(win) + 1)
			case k < 4:
				now -= rng.Int64N(int64(win)/8 + 1)
			case k < 5 && len(uses) > 0:
				now = uses[len(uses)-1-rng.IntN(min(len(uses), 8))].At
			case k < 6 && len(uses) > 0:
				now = uses[rng.IntN(len(uses))].At
			}
			n := 1 + rng.Int64N(min(l, 4))
			var ok bool
			switch {
			case run%2 == 0:
				next, r, _ := lim.p.Step(s, now, n)
				if ok = r.OK; ok {
					s = next
				}
			case n == 1:
				ok = lim.AllowAt(now)
			default:
				r, _ := lim.AllowNAt(now, n)
				ok = r.OK
			}
			if ok {
				uses = append(uses, bound.Use{At: now, Cost: n})
			}
		}
		if err := bound.Check(uses, 2*uint64(l), uint64(l), uint64(win)); err != nil {
			t.Fatalf("limit %d, window %d: %v", l, win, err)
		}
		worst = max(worst, float64(trailingMax(uses, int64(win)))/float64(l))
	}
	t.Logf("most units at caller times in any (t-W, t]: %.3f times the limit", worst)
}

// trailingMax returns the most units at times in any interval (t-w, t].
func trailingMax(uses []bound.Use, w int64) int64 {
	u := slices.SortedFunc(slices.Values(uses), func(a, b bound.Use) int { return cmp.Compare(a.At, b.At) })
	var most, sum int64
	i := 0
	for _, x := range u {
		sum += x.Cost
		for u[i].At <= x.At-w {
			sum -= u[i].Cost
			i++
		}
		most = max(most, sum)
	}
	return most
}

// logCheck keeps an exact sliding log of admissions next to a counter.
type logCheck struct {
	times []int64 // admission times, one per unit, in order
}

// add logs n units at t, forgetting those no window check can reach.
func (c *logCheck) add(t, n int64) {
	for range n {
		c.times = append(c.times, t)
	}
	if len(c.times) > 1<<16 {
		c.times = append(c.times[:0], c.times[len(c.times)-1<<12:]...)
	}
}

// in returns the units admitted in (t-w, t].
func (c *logCheck) in(t, w int64) int64 {
	n := int64(0)
	for i := len(c.times) - 1; i >= 0 && c.times[i] > t-w; i-- {
		n++
	}
	return n
}

// TestLogError runs monotone random schedules, checks the documented bound
// at every admission (Limit + floor(Prev*f), hence below 2*Limit), and
// measures how far the counter strays from an exact sliding log both ways.
func TestLogError(t *testing.T) {
	const l, w = 100, int64(time.Second)
	steps := 200000
	if race.Enabled { // pure: see package race
		steps = 20000
	}
	for _, tc := range []struct {
		name string
		gap  func(*rand.Rand) int64 // time to the next request
		n    func(*rand.Rand) int64
	}{
		{"poisson 0.5x", func(r *rand.Rand) int64 { return int64(r.ExpFloat64() * float64(w) / (0.5 * l)) }, one},
		{"poisson 1.2x", func(r *rand.Rand) int64 { return int64(r.ExpFloat64() * float64(w) / (1.2 * l)) }, one},
		{"poisson 4x", func(r *rand.Rand) int64 { return int64(r.ExpFloat64() * float64(w) / (4 * l)) }, one},
		{"bursts", func(r *rand.Rand) int64 {
			if r.IntN(40) == 0 {
				return r.Int64N(3 * w)
			}
			return r.Int64N(w / 1000)
		}, func(r *rand.Rand) int64 { return 1 + r.Int64N(5) }},
	} {
		rng := rand.New(rand.NewPCG(7, 8))
		p, _ := NewParams(l, time.Duration(w))
		var (
			s                  State
			log, exact         logCheck
			worst              int64
			admitted, exactAdm int64
		)
		now := int64(0)
		for range steps {
			now += tc.gap(rng)
			n := tc.n(rng)
			if exact.in(now, w)+n <= l {
				exactAdm += n
				exact.add(now, n)
			}
			next, r, _ := p.Step(s, now, n)
			if !r.OK {
				continue
			}
			s, admitted = next, admitted+n
			log.add(now, n)
			f := float64(now-s.Start) / float64(w)
			bound := l + int64(math.Floor(float64(s.Prev)*f))
			got := log.in(now, w)
			if got > bound || got > 2*l-1 {
				t.Fatalf("%s: %d units in the window ending at %d, bound %d", tc.name, got, now, bound)
			}
			worst = max(worst, got)
		}
		t.Logf("%s: worst trailing-window count %.2f*limit; admitted %.4f of what an exact sliding log admits",
			tc.name, float64(worst)/l, float64(admitted)/float64(exactAdm))
	}
}

func one(*rand.Rand) int64 { return 1 }

// TestLogBoundTight drives the counter to the documented worst case: the
// previous window's units all at its end, then every unit the estimate
// allows, approaches 2*Limit units in one window length.
func TestLogBoundTight(t *testing.T) {
	const l, w = 50, int64(10000)
	p, _ := NewParams(l, time.Duration(w))
	var (
		s   State
		log logCheck
	)
	admit := func(now, n int64) bool {
		next, r, _ := p.Step(s, now, n)
		if r.OK {
			s = next
			log.add(now, n)
		}
		return r.OK
	}
	if !admit(0, 1) || !admit(w-1, l-1) {
		t.Fatal("could not fill the first window")
	}
	worst := int64(0)
	for now := w; now < 2*w; now++ {
		for admit(now, 1) {
		}
		worst = max(worst, log.in(now, w))
	}
	if worst > 2*l-1 || worst < 2*l-2 {
		t.Fatalf("worst trailing-window count %d, want 2*limit-2 or 2*limit-1 = %d", worst, 2*l-1)
	}
}

// TestConcurrentConservation: goroutines race on one Limiter at a series of
// shared instants; at each instant they admit exactly what a sequential
// counter admits there, however the CASes interleave.
func TestConcurrentConservation(t *testing.T) {
	const l, w = 1000, int64(time.Millisecond)
	lim, _ := New(l, time.Duration(w))
	p := lim.Params()
	var ref State
	rng := rand.New(rand.NewPCG(9, 10))
	now := int64(1e12)
	workers := 8
	rounds := 200
	if testing.Short() {
		rounds = 40
	}
	for range rounds {
		now += rng.Int64N(w / 2)
		got := limittest.RaceAt(lim, now, workers)
		want := int64(0)
		for {
			next, _, ok := p.take(ref, now, 1)
			if !ok {
				break
			}
			ref, want = narrow(next), want+1
		}
		if got != want {
			t.Fatalf("at %d: goroutines admitted %d, a sequential counter %d", now, got, want)
		}
		if s := Unpack(lim.cell.Load()); s != ref {
			t.Fatalf("at %d: state %+v, sequential %+v", now, s, ref)
		}
	}
}

func TestZeroAllocs(t *testing.T) {
	l, _ := New(1000, time.Second)
	now := int64(0)
	if a := testing.AllocsPerRun(1000, func() {
		now += 1000
		l.AllowAt(now)
		_, _ = l.AllowNAt(now, 3)
		_ = l.EstimateAt(now)
	}); a != 0 {
		t.Fatalf("%v allocations per run", a)
	}
}

// TestSizes reports the bytes per limiter for the README's memory table and
// fails if the cell shares a cache line with the parameters or grows.
func TestSizes(t *testing.T) {
	var l Limiter
	cell := unsafe.Sizeof(l.cell)
	limittest.OwnLine(t, "window.Limiter", unsafe.Sizeof(l), unsafe.Offsetof(l.p)+unsafe.Sizeof(l.p), unsafe.Offsetof(l.cell), cell)
	if s := unsafe.Sizeof(State{}); s != 16 {
		t.Errorf("State is %d bytes, want 16", s)
	}
	t.Logf("window.Limiter %d bytes (cell %d), window.State %d bytes",
		unsafe.Sizeof(Limiter{}), cell, unsafe.Sizeof(State{}))
}

func FuzzStep(f *testing.F) {
	f.Add(int64(10), int64(1000), int64(0), uint32(3), uint32(4), int64(500), int64(2))
	f.Add(int64(MaxLimit), int64(math.MaxInt64), int64(math.MinInt64), uint32(math.MaxUint32), uint32(0), int64(math.MaxInt64), int64(MaxLimit))
	f.Add(int64(1), int64(1), int64(5), uint32(1), uint32(1), int64(6), int64(1))
	f.Fuzz(func(t *testing.T, l, w, start int64, prev, cur uint32, now, n int64) {
		p, err := NewParams(l, time.Duration(w))
		if err != nil {
			var pe *limit.ParamError
			if !errors.As(err, &pe) || pe.Pkg != "window" || !strings.HasPrefix(err.Error(), "window: ") {
				t.Fatalf("error %#v is not the package's ParamError", err)
			}
			return
		}
		s := State{Start: start, Prev: prev, Cur: cur}
		next, r, err := p.Step(s, now, n)
		if err != limittest.WantErr(n, l) {
			t.Fatalf("error %v for n %d", err, n)
		}
		if err != nil {
			return
		}
		if !r.OK {
			if r.RetryAfter <= 0 || next != s {
				t.Fatalf("denial %+v, next %+v", r, next)
			}
			return
		}
		if r.RetryAfter != 0 || r.Remaining < 0 ||
			n > 0 && (int64(next.Cur) > l || next.Prev > max(uint32(l), prev, cur)) {
			t.Fatalf("admission %+v, next %+v", r, next)
		}
		// The admission must be allowed by the exact formula.
		if n > 0 {
			q, e, _ := p.r.Advance(wide(s), now)
			if est := p.r.Estimate(q, e) + float64(n); est > float64(l)*(1+1e-12) {
				t.Fatalf("admitted with estimate %v > %d", est, l)
			}
		}
	})
}

// TestDenialWritesNothing runs denials on a counter in read-only memory, on
// the one atomic128 path whose Load is a plain load and whose faulting
// store leaves nothing behind: CMPXCHG16B, CASPAL and LDAXP/STLXP load by
// storing, and the fallback's faulting store would leave its seqlock
// stripe held for every later test.
func TestDenialWritesNothing(t *testing.T) {
	if p := atomic128.Path(); p != "cx16-vmovdqa" {
		t.Skipf("atomic128 path %s", p)
	}
	l, err := New(4, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for l.AllowAt(1000) {
	}
	ro := limittest.ReadOnly(t, l)
	limittest.DenialsWriteNothing(t, ro, 1000, int64(3*time.Second), 1, 4)
	// n = 0 is admitted and writes nothing, even where the count has room.
	for _, now := range []int64{1000, int64(3 * time.Second)} {
		var r, rt limit.Result
		if limittest.Faults(func() { r, _ = ro.AllowNAt(now, 0) }) || !r.OK {
			t.Fatalf("AllowNAt(%d, 0) wrote the limiter or was refused: %+v", now, r)
		}
		if limittest.Faults(func() { rt, _, _ = ro.TakeAt(now, 0) }) || !rt.OK {
			t.Fatalf("TakeAt(%d, 0) wrote the limiter or was refused: %+v", now, rt)
		}
	}
}
