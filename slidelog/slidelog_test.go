package slidelog

import (
	"errors"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cellrate/cellrate/internal/bound"
	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/window"
)

// logModel is the ideal sliding log: every admission's time, kept in order.
// It shares nothing with the package but the rule.
type logModel struct {
	l, w  int64
	times []int64 // non-decreasing
}

// step decides n at now (now >= every earlier now).
func (m *logModel) step(now, n int64) limit.Result {
	var in []int64 // times in (now-w, now], oldest first
	for _, t := range m.times {
		if now-t < m.w { // exact: now >= t
			in = append(in, t)
		}
	}
	r := limit.Result{Remaining: m.l - int64(len(in))}
	if n <= r.Remaining {
		for range n {
			m.times = append(m.times, now)
		}
		r.OK = true
		r.Remaining -= n
		return r
	}
	r.RetryAfter = time.Duration(in[n-r.Remaining-1] + m.w - now)
	return r
}

func mustNew(t testing.TB, l int64, w time.Duration) *Limiter {
	lim, err := New(l, w)
	if err != nil {
		t.Fatal(err)
	}
	return lim
}

func TestMatchesLog(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	runs := 300
	if testing.Short() {
		runs = 30
	}
	for range runs {
		l := 1 + rng.Int64N(20)
		w := 1 + rng.Int64N(1000)
		lim := mustNew(t, l, time.Duration(w))
		m := &logModel{l: l, w: w}
		now := int64(math.MinInt64) + w + rng.Int64N(1<<62) // past the start-of-time rule
		if rng.IntN(3) == 0 {
			now = math.MaxInt64 - 200*w
		}
		for range 200 {
			now += rng.Int64N(w/4 + 1)
			n := rng.Int64N(l + 1)
			if rng.IntN(2) == 0 {
				n = 1
			}
			want := m.step(now, n)
			got, err := lim.AllowNAt(now, n)
			if err != nil || got != want {
				t.Fatalf("L=%d W=%d now=%d n=%d: got %+v %v, want %+v", l, w, now, n, got, err, want)
			}
		}
	}
}

// schedule returns admissions recorded on lim and on a window counter of the
// same limit, for requests at random times, stale ones among them.
func schedule(rng *rand.Rand, lim *Limiter, win *window.Limiter, stale bool) (log, counter []bound.Use) {
	w := int64(lim.Params().Window())
	now := int64(0)
	for range 2000 {
		now += rng.Int64N(w / 8)
		at := now
		if stale && rng.IntN(4) == 0 {
			at -= rng.Int64N(3 * w)
		}
		n := int64(1)
		if rng.IntN(5) == 0 {
			n = 1 + rng.Int64N(lim.Params().Limit())
		}
		if r, _ := lim.AllowNAt(at, n); r.OK {
			log = append(log, bound.Use{At: at, Cost: n, Kind: "slidelog"})
		}
		if r, _ := win.AllowNAt(at, n); r.OK {
			counter = append(counter, bound.Use{At: at, Cost: n, Kind: "window"})
		}
	}
	return log, counter
}

// The exact bound, against the sliding-window counter's estimate on the
// same requests: the log never passes L in any window, the counter may
// reach 2L-1 (its documented bound), and both hold their token-bucket-
// shaped bound L + L*t/W.
func TestBoundAgainstWindow(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var logTotal, winTotal, over int64
	for i := range 40 {
		l := 2 + rng.Int64N(30)
		w := time.Duration(1000 + rng.Int64N(1e6))
		lim := mustNew(t, l, w)
		win, err := window.New(l, w)
		if err != nil {
			t.Fatal(err)
		}
		log, counter := schedule(rng, lim, win, i%2 == 1)
		if err := bound.CheckWindow(log, l, uint64(w)); err != nil {
			t.Fatalf("slidelog L=%d W=%v: %v", l, w, err)
		}
		if err := bound.Check(log, uint64(l), uint64(l), uint64(w)); err != nil {
			t.Fatalf("slidelog L=%d W=%v: %v", l, w, err)
		}
		if err := bound.CheckWindow(counter, 2*l-1, uint64(w)); err != nil {
			t.Fatalf("window L=%d W=%v beyond its own bound: %v", l, w, err)
		}
		if bound.CheckWindow(counter, l, uint64(w)) != nil {
			over++
		}
		for _, u := range log {
			logTotal += u.Cost
		}
		for _, u := range counter {
			winTotal += u.Cost
		}
	}
	if over == 0 {
		t.Error("the window counter never passed L: the comparison shows nothing")
	}
	t.Logf("window counter passed L in %d of 40 schedules; admitted %.3f times what the log admitted",
		over, float64(winTotal)/float64(logTotal))
}

// The schedule where the counter's estimate is furthest off (window's
// TestLogBoundTight): 1 unit opens a fixed window, L-1 come at its end,
// then every unit each side allows, 1 ns apart, through the next window.
func TestTightScheduleAgainstWindow(t *testing.T) {
	const l, w = 20, int64(2000)
	lim := mustNew(t, l, time.Duration(w))
	win, _ := window.New(l, time.Duration(w))
	var log, counter []bound.Use
	admit := func(at, n int64) {
		if r, _ := lim.AllowNAt(at, n); r.OK {
			log = append(log, bound.Use{At: at, Cost: n})
		}
		if r, _ := win.AllowNAt(at, n); r.OK {
			counter = append(counter, bound.Use{At: at, Cost: n})
		}
	}
	admit(0, 1)
	admit(w-1, l-1)
	for at := w; at < 2*w; at++ {
		for range l {
			admit(at, 1)
		}
	}
	if err := bound.CheckWindow(log, l, uint64(w)); err != nil {
		t.Fatal(err)
	}
	if bound.CheckWindow(counter, 2*l-3, uint64(w)) == nil {
		t.Fatal("the counter stayed under 2L-2 on its worst schedule")
	}
}

// TestConcurrentBound races 8 goroutines for a few free slots on a shared
// fake clock, with stale readings among them. (A take by load and store in
// place of the compare-and-swap fails it within a run, with and without -race.)
func TestConcurrentBound(t *testing.T) {
	for _, l := range []int64{1, 2, 8} {
		concurrentBound(t, l)
	}
}

func concurrentBound(t *testing.T, l int64) {
	const w = int64(1000)
	lim := mustNew(t, l, time.Duration(w))
	var clock atomic.Int64 // a shared fake clock each goroutine moves forward
	workers, ops := 8, 20000
	if testing.Short() {
		ops = 3000
	}
	uses := make([][]bound.Use, workers)
	var wg sync.WaitGroup
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 9))
			for range ops {
				now := clock.Add(rng.Int64N(w / (4 * l))) // about 8 requests per free slot
				if rng.IntN(8) == 0 {
					now -= rng.Int64N(2 * w) // a stale reading
				}
				n := int64(1)
				if rng.IntN(6) == 0 {
					n = 1 + rng.Int64N(3)
				}
				if r, _ := lim.AllowNAt(now, n); r.OK {
					uses[g] = append(uses[g], bound.Use{At: now, Cost: n})
				}
			}
		}()
	}
	wg.Wait()
	var all []bound.Use
	for _, u := range uses {
		all = append(all, u...)
	}
	if err := bound.CheckWindow(all, l, uint64(w)); err != nil {
		t.Fatal(err)
	}
	t.Logf("L=%d: %d admissions checked", l, len(all))
}

func TestPutBack(t *testing.T) {
	lim := mustNew(t, 5, time.Second)
	now := int64(time.Hour)
	for range 3 {
		lim.AllowAt(now)
	}
	before := make([]uint64, 5)
	for i := range before {
		before[i] = lim.slots[i].Load()
	}
	r, err := lim.AllowNAt(now+1, 3) // 2 free: takes 2, fails, puts them back
	if err != nil || r.OK || r.Remaining != 2 || r.RetryAfter != time.Second-1 {
		t.Fatalf("got %+v %v", r, err)
	}
	for i := range before {
		if lim.slots[i].Load() != before[i] {
			t.Fatalf("slot %d changed by a refused request", i)
		}
	}
	if r, _ := lim.AllowNAt(now+1, 2); !r.OK || r.Remaining != 0 {
		t.Fatalf("the 2 free slots: %+v", r)
	}
}

func TestEndsOfTime(t *testing.T) {
	const w = int64(time.Second)
	lim := mustNew(t, 3, time.Duration(w))
	if r, _ := lim.AllowNAt(math.MinInt64, 1); r.OK || r.RetryAfter != time.Duration(w) {
		t.Fatalf("at MinInt64: %+v", r)
	}
	if lim.AllowAt(math.MinInt64 + w - 1) {
		t.Fatal("admitted before MinInt64+W")
	}
	for range 3 {
		if !lim.AllowAt(math.MinInt64 + w) {
			t.Fatal("refused at MinInt64+W")
		}
	}
	// A request at the other end sees every slot centuries old.
	for range 3 {
		if !lim.AllowAt(math.MaxInt64) {
			t.Fatal("refused at MaxInt64")
		}
	}
	if r, _ := lim.AllowNAt(math.MaxInt64, 1); r.OK || r.RetryAfter != time.Duration(w) {
		t.Fatalf("full at MaxInt64: %+v", r)
	}
	// Stale, from the far end: the slots at MaxInt64 free 2^64 ns later.
	if r, _ := lim.AllowNAt(math.MinInt64, 3); r.OK || r.RetryAfter != limit.Never {
		t.Fatalf("stale across the range: %+v", r)
	}
}

func TestErrors(t *testing.T) {
	var pe *limit.ParamError
	for _, c := range []struct {
		l     int64
		w     time.Duration
		param string
	}{{0, time.Second, "limit"}, {MaxLimit + 1, time.Second, "limit"}, {1, 0, "window"}} {
		if _, err := New(c.l, c.w); !errors.As(err, &pe) || pe.Param != c.param {
			t.Errorf("%+v: %v", c, err)
		}
	}
	if _, err := New(1, time.Second, WithClock(nil)); !errors.As(err, &pe) || pe.Param != "clock" {
		t.Errorf("nil clock: %v", err)
	}
	if _, err := NewFromParams(Params{}); !errors.As(err, &pe) {
		t.Errorf("zero Params: %v", err)
	}
	lim := mustNew(t, 2, time.Second)
	if _, err := lim.AllowNAt(0, -1); err != limit.ErrNegativeCost {
		t.Error(err)
	}
	if _, err := lim.AllowNAt(0, 3); err != limit.ErrCostExceedsBurst {
		t.Error(err)
	}
	if r, err := lim.AllowNAt(0, 0); !r.OK || err != nil || r.Remaining != 2 {
		t.Errorf("n=0: %+v %v", r, err)
	}
}

func TestWithClock(t *testing.T) {
	now := int64(time.Hour)
	lim, _ := New(1, time.Second, WithClock(func() int64 { return now }))
	if !lim.Allow() || lim.Allow() || lim.Remaining() != 0 {
		t.Fatal("the clock was not used")
	}
	now += int64(time.Second)
	if r, _ := lim.AllowN(1); !r.OK {
		t.Fatal("a window later")
	}
}

func TestZeroAllocs(t *testing.T) {
	lim := mustNew(t, 16, time.Second)
	now := int64(time.Hour)
	if a := testing.AllocsPerRun(1000, func() {
		now += int64(time.Second)
		lim.AllowAt(now)
		lim.AllowAt(now) // one admitted, then (L=16) still room: both paths
		lim.AllowNAt(now, 16)
		lim.AllowNAt(now, 4) // denied: put back, RetryAfter
	}); a != 0 {
		t.Errorf("%v allocations per run", a)
	}
}
