package gcra

import (
	"errors"
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

type rateCase struct {
	events int64
	period time.Duration
	burst  int64
}

// TestSaturatedNoDrift hammers a limiter for simulated years, never idle,
// and checks it admits the full rate: b + floor(t/T) events over t, minus at
// most the one event that the idle-restart rounding at the start can cost.
func TestSaturatedNoDrift(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, c := range []rateCase{
		{3, time.Second, 5},
		{7, 10, 2},
		{3, 1e14 + 1, 3},          // ~10 years at a few thousand requests
		{1e9 - 7, time.Second, 9}, // T just over 1 ns
	} {
		l, err := New(c.events, c.period, c.burst)
		if err != nil {
			t.Fatal(err)
		}
		T := int64(c.period) / c.events
		start := int64(rng.Uint64())
		now, count := start, int64(0)
		for range 100000 {
			if l.AllowAt(now) {
				count++
			}
			now += rng.Int64N(T/2 + 1)
		}
		// Exact count for the span: b + floor((last-start)*events/period).
		span := new(big.Int).Mul(big.NewInt(now-start), big.NewInt(c.events))
		span.Quo(span, big.NewInt(int64(c.period)))
		ideal := c.burst + span.Int64()
		if count > ideal+1 || count < ideal-1 {
			t.Errorf("%+v: admitted %d over %d ns, ideal %d", c, count, now-start, ideal)
		}
	}
}

func TestStaleNowCreatesNothing(t *testing.T) {
	l, _ := New(1, time.Second, 3)
	now := int64(1e12)
	for l.AllowAt(now) {
	}
	// A caller with a stale clock, however stale, gets nothing more.
	for _, back := range []int64{1, int64(time.Second), 1 << 40, math.MaxInt64} {
		if l.AllowAt(satAdd(now, -back)) {
			t.Fatalf("stale now (-%d) admitted", back)
		}
	}
	r, _ := l.AllowNAt(now-int64(time.Second), 1)
	if r.OK || r.RetryAfter != time.Duration(2*time.Second) {
		t.Fatalf("stale AllowNAt: %+v, want retry after 2s", r)
	}
}

func TestExtremes(t *testing.T) {
	l, _ := New(1, time.Nanosecond, 4)
	if !l.AllowAt(math.MinInt64) {
		t.Fatal("MinInt64 refused on a full limiter")
	}
	// The last burst of nanoseconds cannot hold a TAT: refused, not wrapped.
	if l.AllowAt(math.MaxInt64) {
		t.Fatal("admitted at MaxInt64 with a TAT that would overflow")
	}
	if !l.AllowAt(math.MaxInt64 - 8) {
		t.Fatal("refused shortly before MaxInt64")
	}
	if l.AllowAt(math.MinInt64) {
		t.Fatal("a wrapped TAT admitted at MinInt64")
	}
}

func TestErrors(t *testing.T) {
	for _, c := range []struct {
		events   int64
		period   time.Duration
		burst    int64
		param    string
		value    any
		min, max any
	}{
		{0, time.Second, 1, "events", int64(0), int64(1), nil},
		{-1, time.Second, 1, "events", int64(-1), int64(1), nil},
		{1, 0, 1, "period", time.Duration(0), time.Duration(1), nil},
		{1, -time.Second, 1, "period", -time.Second, time.Duration(1), nil},
		{1, time.Second, 0, "burst", int64(0), int64(1), nil},
		{2, 1, 1, "events", int64(2), int64(1), int64(1)},
		{7, 5, 1, "events", int64(7), int64(1), int64(5)},
		{1, 1 << 61, 3, "burst", int64(3), int64(1), int64(2)},
		{3, time.Second, 1 << 62, "burst", int64(1 << 62), int64(1), int64(13835058055)},
		{3, 3<<61 + 1, 2, "burst", int64(2), int64(1), int64(1)}, // burst*T = 2^62 + 2/3 ns: over by a fraction
	} {
		_, err := New(c.events, c.period, c.burst)
		var pe *limit.ParamError
		if !errors.As(err, &pe) || pe.Pkg != "gcra" || pe.Param != c.param || pe.Value != c.value || pe.Min != c.min || pe.Max != c.max {
			t.Errorf("New(%d, %v, %d) = %#v, want %s %v in [%v, %v]", c.events, c.period, c.burst, err, c.param, c.value, c.min, c.max)
			continue
		}
		// Max is the largest value that fits: it must be accepted.
		if m, ok := pe.Max.(int64); ok {
			ev, b := c.events, c.burst
			if c.param == "events" {
				ev = m
			} else {
				b = m
			}
			if _, err := New(ev, c.period, b); err != nil {
				t.Errorf("New(%d, %v, %d) with the Max of %v: %v", ev, c.period, b, err, err)
			}
		}
	}
	if _, err := New(1, time.Second, 1, WithClock(nil)); !isParam(err, "clock") {
		t.Errorf("WithClock(nil): %v", err)
	}
	for _, rate := range []float64{0, -1, math.NaN(), math.Inf(1), 1e-12, 2e9} {
		if _, err := NewRate(rate, 1); !isParam(err, "rate") {
			t.Errorf("NewRate(%v, 1): %v", rate, err)
		}
	}
	if _, err := NewRate(1, 0); !isParam(err, "burst") {
		t.Errorf("NewRate(1, 0): %v", err)
	}
	l, _ := New(1, time.Second, 2)
	if r, err := l.AllowNAt(0, -1); !errors.Is(err, limit.ErrNegativeCost) || r.OK {
		t.Errorf("n=-1: %+v %v", r, err)
	}
	if r, err := l.AllowNAt(0, 3); !errors.Is(err, limit.ErrCostExceedsBurst) || r.OK || r.RetryAfter != limit.Never {
		t.Errorf("n=3: %+v %v", r, err)
	}
}

func isParam(err error, param string) bool {
	var pe *limit.ParamError
	return errors.As(err, &pe) && pe.Pkg == "gcra" && pe.Param == param
}

// TestConcurrentBound runs many goroutines on one limiter with an injected
// clock that they advance themselves, so their now values reach the limiter
// out of order, and checks the bound over everything admitted.
func TestConcurrentBound(t *testing.T) {
	for _, c := range []rateCase{{3, time.Microsecond, 5}, {1, 7, 2}, {1000, time.Millisecond, 50}} {
		l, _ := New(c.events, c.period, c.burst)
		var clock atomic.Int64
		clock.Store(int64(rand.Uint64()))
		const G = 8
		iters := 20000
		if testing.Short() {
			iters = 3000
		}
		per := make([][]admitted, G)
		var wg sync.WaitGroup
		for g := range G {
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(uint64(g), 9))
				T := int64(c.period) / c.events
				for range iters {
					now := clock.Add(rng.Int64N(T/G + 2))
					if rng.IntN(4) == 0 {
						n := 1 + rng.Int64N(c.burst)
						if r, _ := l.AllowNAt(now, n); r.OK {
							per[g] = append(per[g], admitted{now, n})
						}
					} else if l.AllowAt(now) {
						per[g] = append(per[g], admitted{now, 1})
					}
				}
			})
		}
		wg.Wait()
		all := slices.Concat(per...)
		if len(all) == 0 {
			t.Fatal("nothing admitted")
		}
		checkBound(t, all, c.events, c.period, c.burst)
	}
}

func TestZeroAllocs(t *testing.T) {
	l, _ := New(3, time.Second, 10)
	now := int64(0)
	if a := testing.AllocsPerRun(1000, func() {
		now += 1e6
		l.AllowAt(now)
		_, _ = l.AllowNAt(now, 2)
		l.Allow()
	}); a != 0 {
		t.Fatalf("%v allocs per run", a)
	}
}

func TestWholeIntervalIsExactAtOneInstant(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for range 1000 {
		events := 1 + rng.Int64N(1000)
		period := time.Duration(events * (1 + rng.Int64N(1e9)))
		burst := 1 + rng.Int64N(20)
		l, err := New(events, period, burst)
		if err != nil {
			t.Fatal(err)
		}
		now := int64(rng.Uint64()) / 2
		for i := range burst {
			if !l.AllowAt(now) {
				t.Fatalf("%d per %v: event %d of a full burst %d refused", events, period, i, burst)
			}
		}
		if l.AllowAt(now) {
			t.Fatal("admitted past the burst")
		}
	}
}

// TestLayout: the TAT has a cache line to itself, so admissions on other
// cores do not evict the parameters every decision reads.
func TestLayout(t *testing.T) {
	var l Limiter
	limittest.OwnLine(t, "gcra.Limiter", unsafe.Sizeof(l), unsafe.Offsetof(l.ps)+unsafe.Sizeof(l.ps), unsafe.Offsetof(l.tat), unsafe.Sizeof(l.tat))
}

// TestDenialWritesNothing runs denials on a limiter in read-only memory:
// a mostly-denying GCRA must not write its cache line.
func TestDenialWritesNothing(t *testing.T) {
	l, err := New(3, time.Second, 5)
	if err != nil {
		t.Fatal(err)
	}
	for l.AllowAt(1000) { // until it denies at this instant
	}
	ro := limittest.ReadOnly(t, l)
	limittest.DenialsWriteNothing(t, ro, 1000, int64(time.Second), 1, 5)
	limittest.DenialsWriteNothing(t, ro, 0, int64(time.Second), 1) // stale
	// n == 0 is admitted and changes nothing: it writes nothing either.
	var r limit.Result
	if limittest.Faults(func() { r, _ = ro.AllowNAt(1000, 0) }) || !r.OK {
		t.Fatalf("AllowNAt(n = 0) wrote the limiter or was refused: %+v", r)
	}
}
