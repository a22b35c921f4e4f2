package adaptive

import (
	"errors"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/cellrate/cellrate/limit"
)

const sec = int64(time.Second)

func seeded(seed uint64) func() uint64 { return rand.New(rand.NewPCG(seed, seed+1)).Uint64 }

func mustNew(t testing.TB, k float64, w time.Duration, opts ...Option) *Throttle {
	th, err := New(k, w, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return th
}

func TestFormula(t *testing.T) {
	th := mustNew(t, 2, 10*time.Second, WithRand(seeded(1)))
	now := 5 * sec
	for i := range 100 {
		th.AllowAt(now)
		if i%4 == 0 { // 25 of 100 accepted
			th.AcceptedAt(now)
		}
	}
	req, acc := th.countsAt(now)
	if req != 100 || acc != 25 {
		t.Fatalf("counts %d %d", req, acc)
	}
	want := (100 - 2*25) / 101.0
	if p := th.rejectProbabilityAt(now); p != want {
		t.Fatalf("p = %v, want %v", p, want)
	}
	// All accepted: never throttled.
	th2 := mustNew(t, 2, 10*time.Second)
	for range 1000 {
		if !th2.AllowAt(now) {
			t.Fatal("a throttle whose backend accepts everything rejected")
		}
		th2.AcceptedAt(now)
	}
}

// A request rejects exactly when the uniform draw is below p.
func TestRejectsBelowP(t *testing.T) {
	var draw uint64
	th := mustNew(t, 2, time.Minute, WithRand(func() uint64 { return draw }))
	now := sec
	for range 3 {
		th.AllowAt(now) // 3 requests, 0 accepts: p = 3/4
	}
	if p := th.rejectProbabilityAt(now); p != 0.75 {
		t.Fatalf("p = %v", p)
	}
	draw = 3<<62 - 1<<11 // the largest 53-bit draw below 3/4
	if th.AllowAt(now) {
		t.Fatal("a draw below p admitted")
	}
	// 4 requests now: p = 4/5.
	draw = 4 * (math.MaxUint64 / 5)
	if th.AllowAt(now) {
		t.Fatal("a draw below p admitted")
	}
	draw = math.MaxUint64/5*4 + 1<<12 // above p = 5/6? no: p is 5/6 now
	draw = math.MaxUint64 - 1<<11
	if !th.AllowAt(now) {
		t.Fatal("the largest draw rejected")
	}
}

func TestWindowSlides(t *testing.T) {
	th := mustNew(t, 2, 10*time.Second, WithBuckets(10))
	for s := range int64(20) {
		th.AllowAt(s*sec + 1)
		th.AcceptedAt(s*sec + 1)
		req, acc := th.countsAt(s*sec + 2)
		if want := min(s+1, 10); req != want || acc != want {
			t.Fatalf("second %d: counts %d %d, want %d", s, req, acc, want)
		}
	}
	// A gap longer than the window forgets everything.
	if req, acc := th.countsAt(100 * sec); req != 0 || acc != 0 {
		t.Fatalf("after a gap: %d %d", req, acc)
	}
	// A stale now counts in the latest bucket.
	th.AllowAt(50 * sec)
	if req, _ := th.countsAt(100 * sec); req != 1 {
		t.Fatalf("stale request: %d", req)
	}
}

func TestEndsOfTime(t *testing.T) {
	for _, start := range []int64{math.MinInt64, -5, math.MaxInt64 - 30*sec} {
		th := mustNew(t, 2, 10*time.Second)
		for i := range int64(30) {
			now := start + i*sec
			th.AllowAt(now)
			th.AcceptedAt(now)
			if req, acc := th.countsAt(now); req != min(i+1, 10) || acc != req {
				t.Fatalf("start %d second %d: %d %d", start, i, req, acc)
			}
		}
	}
	th := mustNew(t, 2, 10, WithBuckets(10)) // 1ns buckets
	for _, now := range []int64{math.MinInt64, math.MinInt64 + 1, math.MaxInt64} {
		th.AllowAt(now)
	}
	if req, _ := th.countsAt(math.MaxInt64); req != 1 {
		t.Fatalf("1ns buckets at MaxInt64: %d", req)
	}
}

func TestNewRefuses(t *testing.T) {
	for _, c := range []struct {
		param string
		k     float64
		w     time.Duration
		opts  []Option
	}{
		{"k", 0.5, time.Second, nil},
		{"k", math.NaN(), time.Second, nil},
		{"k", math.Inf(1), time.Second, nil},
		{"buckets", 2, time.Second, []Option{WithBuckets(0)}},
		{"buckets", 2, time.Second, []Option{WithBuckets(1025)}},
		{"window", 2, 5, nil},
		{"clock", 2, time.Second, []Option{WithClock(nil)}},
		{"rand", 2, time.Second, []Option{WithRand(nil)}},
	} {
		_, err := New(c.k, c.w, c.opts...)
		var pe *limit.ParamError
		if !errors.As(err, &pe) || pe.Param != c.param {
			t.Errorf("%s: %v", c.param, err)
		}
	}
}

func TestZeroAllocs(t *testing.T) {
	th := mustNew(t, 2, time.Second, WithRand(seeded(3)))
	now := sec
	th.AllowAt(now)
	th.AcceptedAt(now)
	if a := testing.AllocsPerRun(1000, func() {
		now += int64(time.Millisecond)
		th.AllowAt(now)
		th.AcceptedAt(now)
	}); a != 0 {
		t.Errorf("%v allocations", a)
	}
}

func TestConcurrentCounts(t *testing.T) {
	th := mustNew(t, 2, time.Hour)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5000 {
				th.Allow()
				th.Accepted()
			}
		}()
	}
	wg.Wait()
	if req, acc := th.countsAt(th.now()); req != 40000 || acc != 40000 {
		t.Fatalf("counts %d %d", req, acc)
	}
}

// backend accepts up to capacity per second, in a token bucket holding a
// tenth of a second.
type backend struct {
	capacity float64 // per second
	tokens   float64
	last     int64
}

func (b *backend) accept(now int64) bool {
	b.tokens = min(b.capacity/10, b.tokens+float64(now-b.last)*b.capacity/float64(sec))
	b.last = now
	if b.tokens >= 1 {
		b.tokens--
		return true
	}
	return false
}

type second struct{ demand, sent, accepted int }

// simulate sends demand requests a second through th to a backend whose
// capacity at each second is cap(s), and returns what happened each second.
func simulate(th *Throttle, seconds, demand int, capacity func(s int) float64) []second {
	b := &backend{}
	out := make([]second, seconds)
	step := sec / int64(demand)
	for s := range seconds {
		b.capacity = capacity(s)
		for i := range demand {
			now := int64(s)*sec + int64(i)*step
			out[s].demand++
			if !th.AllowAt(now) {
				continue
			}
			out[s].sent++
			if b.accept(now) {
				out[s].accepted++
				th.AcceptedAt(now)
			}
		}
	}
	return out
}

// TestOverloadAndRecovery: 1000 requests a second; the backend takes 2000
// a second, drops to 200 at 60 s, recovers at 180 s. The throttle (K=2,
// 30 s window) must let everything through while healthy, bring what
// reaches the backend down to about K times what it accepts during the
// overload, and stop shedding after recovery.
func TestOverloadAndRecovery(t *testing.T) {
	const demand, k = 1000, 2.0
	th := mustNew(t, k, 30*time.Second, WithRand(seeded(7)))
	capacity := func(s int) float64 {
		if s >= 60 && s < 180 {
			return 200
		}
		return 2000
	}
	out := simulate(th, 300, demand, capacity)
	for s := range 60 {
		if out[s].sent != demand {
			t.Fatalf("second %d healthy, sent %d of %d", s, out[s].sent, demand)
		}
	}
	// Adaptation: the first second from 60 on in which the backend receives
	// within 10% of K times what it accepts.
	adapt := -1
	for s := 60; s < 180; s++ {
		if float64(out[s].sent) <= 1.1*k*float64(out[s].accepted) {
			adapt = s - 60
			break
		}
	}
	var sent, acc, dem int
	for s := 120; s < 180; s++ { // steady overload
		sent, acc, dem = sent+out[s].sent, acc+out[s].accepted, dem+out[s].demand
	}
	ratio := float64(sent) / float64(acc)
	recover := -1
	for s := 180; s < 300; s++ {
		if float64(out[s].sent) >= 0.99*demand {
			recover = s - 180
			break
		}
	}
	t.Logf("adapted in %d s; steady overload: backend received %.2fx what it accepted, client shed %.1f%% locally; recovered (>=99%% sent) in %d s",
		adapt, ratio, 100*(1-float64(sent)/float64(dem)), recover)
	if adapt < 0 || adapt > 30 {
		t.Errorf("did not adapt within a window: %d", adapt)
	}
	if ratio < 0.85*k || ratio > 1.15*k {
		t.Errorf("steady overload: backend received %.2fx its accepts, want about K=%v", ratio, k)
	}
	if recover < 0 || recover > 30 {
		t.Errorf("did not recover within a window: %d", recover)
	}
}
