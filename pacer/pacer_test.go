package pacer

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cellrate/cellrate/internal/bound"
	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/nanotime"
)

const ms = int64(time.Millisecond)

func mustNew(t testing.TB, events int64, period time.Duration, opts ...Option) *Pacer {
	p, err := New(events, period, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSpacing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clock := nanotime.Since()
		p := mustNew(t, 100, time.Second, WithClock(clock))
		var at []int64
		for range 10 {
			if err := p.Wait(context.Background()); err != nil {
				t.Fatal(err)
			}
			at = append(at, clock())
			time.Sleep(3 * time.Millisecond) // work between takes does not shift the schedule
		}
		for i, a := range at {
			if a != int64(i)*10*ms {
				t.Fatalf("takes at %v, want every 10ms from 0", at)
			}
		}
	})
}

func TestConcurrentWaitersInterleave(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clock := nanotime.Since()
		p := mustNew(t, 100, time.Second, WithClock(clock))
		var mu sync.Mutex
		var at []int64
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 10 {
					if err := p.Wait(context.Background()); err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					at = append(at, clock())
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		slices.Sort(at)
		for i, a := range at {
			if a != int64(i)*10*ms {
				t.Fatalf("take %d at %dms, want %dms", i, a/ms, i*10)
			}
		}
	})
}

// go.uber.org/ratelimit #119: 1 per second with a slack of 1, a pause of 2 s
// after the first take, then 24 more. Here exactly one comes early, then
// the spacing resumes.
func TestSlackIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clock := nanotime.Since()
		p := mustNew(t, 1, time.Second, WithSlack(1), WithClock(clock))
		var at []int64
		for i := range 25 {
			if i == 1 {
				time.Sleep(2 * time.Second)
			}
			p.Wait(context.Background())
			at = append(at, clock()/int64(time.Second))
		}
		want := []int64{0, 2, 2}
		for i := int64(3); len(want) < 25; i++ {
			want = append(want, i)
		}
		if !slices.Equal(at, want) {
			t.Fatalf("takes at %v s, want %v", at, want)
		}
	})
}

func TestDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clock := nanotime.Since()
		p := mustNew(t, 10, time.Second, WithClock(clock))
		p.Wait(context.Background()) // slot 0
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		if err := p.Wait(ctx); err != ErrDeadline || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("got %v", err)
		}
		if clock() != 0 {
			t.Fatal("ErrDeadline waited")
		}
		// The slot at 100 ms was given back.
		p.Wait(context.Background())
		if clock() != 100*ms {
			t.Fatalf("next take at %v", time.Duration(clock()))
		}
	})
}

func TestCancelDuringWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clock := nanotime.Since()
		p := mustNew(t, 10, time.Second, WithClock(clock))
		p.Wait(context.Background()) // slot 0
		ctx1, cancel1 := context.WithCancel(context.Background())
		ctx2, cancel2 := context.WithCancel(context.Background())
		errs := make(chan error, 2)
		go func() { errs <- p.Wait(ctx1) }() // slot 100 ms
		synctest.Wait()
		go func() { errs <- p.Wait(ctx2) }() // slot 200 ms
		synctest.Wait()
		time.Sleep(10 * time.Millisecond)
		cancel1() // not the last slot: stays used, a gap
		if err := <-errs; err != context.Canceled {
			t.Fatal(err)
		}
		cancel2() // the last slot: given back
		if err := <-errs; err != context.Canceled {
			t.Fatal(err)
		}
		p.Wait(context.Background())
		if clock() != 200*ms {
			t.Fatalf("next take at %v, want 200ms", time.Duration(clock()))
		}
	})
}

// The slots of random reservations hold the bound: at most 1+slack +
// (t+1ns)/T in any closed interval of length t, with T a fraction of a ns
// (slots are the exact schedule rounded up to whole ns).
func TestBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 40 {
		events := 1 + rng.Int64N(7)
		period := time.Duration(1000 + rng.Int64N(100000))
		slack := rng.Int64N(4)
		p := mustNew(t, events, period, WithSlack(slack))
		var slots []bound.Use
		now := rng.Int64N(1 << 40)
		for range 500 {
			now += rng.Int64N(int64(period) / events * 2)
			r := p.ReserveAt(now)
			if !r.OK {
				t.Fatal("refused")
			}
			if rng.IntN(10) == 0 && r.Cancel() {
				continue
			}
			slots = append(slots, bound.Use{At: now + int64(r.Wait), Cost: 1})
		}
		if err := bound.CheckSlack(slots, uint64(1+slack), 1, uint64(events), uint64(period)); err != nil {
			t.Fatalf("%d per %v slack %d: %v", events, period, slack, err)
		}
	}
}

// A caller that keeps taking gets slots period/events apart with no drift:
// at 3 per second, slot k is k*T after the first to within the 3 ns of the
// grids (gcra's step grid, whole ns), for every k up to 30000.
func TestNoDrift(t *testing.T) {
	p := mustNew(t, 3, time.Second)
	now := int64(time.Hour) + 1
	var first int64
	for k := range int64(30001) {
		r := p.ReserveAt(now)
		if k == 0 {
			first = now + int64(r.Wait)
		}
		d, ideal := now+int64(r.Wait)-first, k*int64(time.Second)/3 // floor(k*T)
		if d < ideal || d > ideal+3 {
			t.Fatalf("slot %d is %dns after the first, want %d..%d", k, d, ideal, ideal+3)
		}
	}
}

func TestEndOfTime(t *testing.T) {
	p := mustNew(t, 1, time.Second)
	if r := p.ReserveAt(math.MaxInt64 - int64(time.Second)); !r.OK || r.Wait != 0 {
		t.Fatalf("near the end: %+v", r)
	}
	if r := p.ReserveAt(math.MaxInt64 - int64(time.Second)); r.OK || r.Wait != limit.Never {
		t.Fatalf("a slot past the end: %+v", r)
	}
	q := mustNew(t, 1, time.Second)
	if r := q.ReserveAt(math.MinInt64); !r.OK || r.Wait != 0 {
		t.Fatalf("at the start: %+v", r)
	}
	if r := q.ReserveAt(math.MinInt64); !r.OK || r.Wait != time.Second {
		t.Fatalf("second slot at the start: %+v", r)
	}
}

func TestNewRefuses(t *testing.T) {
	for _, c := range []struct {
		param  string
		events int64
		period time.Duration
		opts   []Option
	}{
		{"events", 0, time.Second, nil},
		{"period", 1, 0, nil},
		{"slack", 1, time.Second, []Option{WithSlack(-1)}},
		{"clock", 1, time.Second, []Option{WithClock(nil)}},
	} {
		_, err := New(c.events, c.period, c.opts...)
		var pe *limit.ParamError
		if !errors.As(err, &pe) || pe.Param != c.param || pe.Pkg != "pacer" {
			t.Errorf("%s: %v", c.param, err)
		}
	}
	for _, c := range []struct {
		events int64
		period time.Duration
		slack  int64
	}{{2, 1, 0}, {1, time.Hour, 1 << 40}} { // faster than 1/ns; slack too long
		_, err := New(c.events, c.period, WithSlack(c.slack))
		var pe *limit.ParamError
		if !errors.As(err, &pe) || pe.Pkg != "pacer" {
			t.Errorf("%+v: %v", c, err)
		}
	}
}

func TestZeroAllocs(t *testing.T) {
	p := mustNew(t, 1e9, time.Second) // never waits
	now := int64(time.Hour)
	if a := testing.AllocsPerRun(1000, func() {
		now += 10
		p.ReserveAt(now)
	}); a != 0 {
		t.Errorf("ReserveAt: %v allocations", a)
	}
	q := mustNew(t, 1e9, time.Second)
	ctx := context.Background()
	if a := testing.AllocsPerRun(1000, func() { q.Wait(ctx) }); a != 0 {
		t.Errorf("Wait without a wait: %v allocations", a)
	}
}

// Concurrent reservations on real goroutines: every slot distinct and the
// bound holds.
func TestConcurrentBound(t *testing.T) {
	p := mustNew(t, 1, 100*time.Nanosecond, WithSlack(2))
	var mu sync.Mutex
	var slots []bound.Use
	var wg sync.WaitGroup
	n := 1500
	if testing.Short() {
		n = 500
	}
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := make([]bound.Use, 0, n)
			for range n {
				now := nanotime.Now()
				r := p.ReserveAt(now)
				local = append(local, bound.Use{At: now + int64(r.Wait), Cost: 1})
			}
			mu.Lock()
			slots = append(slots, local...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	if err := bound.Check(slots, 3, 1, 100); err != nil {
		t.Fatal(err)
	}
}
