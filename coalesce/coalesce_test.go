package coalesce

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cellrate/cellrate/limit"
)

// counted is an fn that counts executions per key and holds each for hold
// (virtual time in a bubble).
type counted struct {
	mu     sync.Mutex
	runs   map[string]int
	active map[string]bool
	at     []time.Duration
	start  time.Time
	hold   time.Duration
	t      *testing.T
	body   func(key string)
}

func newCounted(t *testing.T) *counted {
	return &counted{runs: map[string]int{}, active: map[string]bool{}, start: time.Now(), t: t}
}

func (c *counted) fn(key string) (int, error) {
	c.mu.Lock()
	if c.active[key] {
		c.t.Errorf("two executions of %q at once", key)
	}
	c.active[key] = true
	c.runs[key]++
	n := c.runs[key]
	c.at = append(c.at, time.Since(c.start))
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.active[key] = false
		c.mu.Unlock()
	}()
	if c.body != nil {
		c.body(key)
	}
	time.Sleep(c.hold)
	return n, nil
}

func mustNew(t *testing.T, fn func(string) (int, error), opts ...Option) *Group[string, int] {
	g, err := New(fn, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// doAll starts n callers of key at the current (virtual) time and returns
// a function that waits for them and returns their results.
func doAll(g *Group[string, int], ctx context.Context, key string, n int) func() ([]int, []error) {
	vs, errs := make([]int, n), make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			vs[i], errs[i] = g.Do(ctx, key)
		}()
	}
	return func() ([]int, []error) { wg.Wait(); return vs, errs }
}

func TestShare(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCounted(t)
		c.hold = 100 * time.Millisecond
		g := mustNew(t, c.fn)
		wait := doAll(g, context.Background(), "a", 10)
		other := doAll(g, context.Background(), "b", 3)
		vs, errs := wait()
		for i := range vs {
			if vs[i] != 1 || errs[i] != nil {
				t.Fatalf("caller %d got %d, %v", i, vs[i], errs[i])
			}
		}
		other()
		if c.runs["a"] != 1 || c.runs["b"] != 1 {
			t.Fatalf("runs %v, want one per key", c.runs)
		}
		// After the execution returned, a new call runs fn again.
		if v, _ := g.Do(context.Background(), "a"); v != 2 {
			t.Fatalf("a later call got %d, want a new execution (2)", v)
		}
	})
}

func TestJoinDuringRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCounted(t)
		c.hold = 100 * time.Millisecond
		g := mustNew(t, c.fn)
		first := doAll(g, context.Background(), "k", 1)
		time.Sleep(60 * time.Millisecond)
		late := doAll(g, context.Background(), "k", 4) // joins the run in flight
		time.Sleep(60 * time.Millisecond)              // 120 ms: the run returned
		after := doAll(g, context.Background(), "k", 1)
		v1, _ := first()
		v2, _ := late()
		v3, _ := after()
		if v1[0] != 1 || v2[0] != 1 || v2[3] != 1 || v3[0] != 2 {
			t.Fatalf("got %v %v %v", v1, v2, v3)
		}
	})
}

func TestDelayCoalescesABurst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCounted(t)
		g := mustNew(t, c.fn, WithDelay(100*time.Millisecond))
		w1 := doAll(g, context.Background(), "k", 1)
		time.Sleep(10 * time.Millisecond)
		w2 := doAll(g, context.Background(), "k", 2)
		time.Sleep(80 * time.Millisecond)
		w3 := doAll(g, context.Background(), "k", 1)
		time.Sleep(60 * time.Millisecond) // 150 ms: after the run at 100 ms
		w4 := doAll(g, context.Background(), "k", 1)
		for _, w := range []func() ([]int, []error){w1, w2, w3} {
			if vs, _ := w(); vs[0] != 1 {
				t.Fatalf("a caller of the first burst got %v", vs)
			}
		}
		if vs, _ := w4(); vs[0] != 2 {
			t.Fatalf("the caller at 150 ms got %v, want a new execution", vs)
		}
		if len(c.at) != 2 || c.at[0] != 100*time.Millisecond || c.at[1] != 250*time.Millisecond {
			t.Fatalf("runs at %v, want [100ms 250ms]", c.at)
		}
	})
}

func TestFlush(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCounted(t)
		g := mustNew(t, c.fn, WithDelay(time.Hour))
		w := doAll(g, context.Background(), "k", 3)
		time.Sleep(time.Second)
		synctest.Wait()
		g.Flush()
		if vs, _ := w(); vs[0] != 1 || vs[2] != 1 {
			t.Fatalf("got %v", vs)
		}
		if len(c.at) != 1 || c.at[0] != time.Second {
			t.Fatalf("runs at %v, want [1s]", c.at)
		}
		w = doAll(g, context.Background(), "k", 1) // Flush is not sticky
		time.Sleep(time.Minute)
		synctest.Wait()
		if len(c.at) != 1 {
			t.Fatalf("a call after Flush ran without waiting: %v", c.at)
		}
		g.Flush()
		w()
	})
}

func TestStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCounted(t)
		c.hold = 50 * time.Millisecond
		g := mustNew(t, c.fn, WithDelay(time.Hour))
		w := doAll(g, context.Background(), "k", 2)
		time.Sleep(10 * time.Millisecond)
		synctest.Wait()
		start := time.Now()
		g.Stop() // runs the delayed execution now and waits for it
		if d := time.Since(start); d != 50*time.Millisecond {
			t.Errorf("Stop returned after %v, want the run's 50ms", d)
		}
		if vs, errs := w(); vs[0] != 1 || errs[1] != nil {
			t.Fatalf("got %v %v", vs, errs)
		}
		if _, err := g.Do(context.Background(), "k"); err != ErrStopped {
			t.Fatalf("Do after Stop: %v", err)
		}
		g.Stop()
		g.Flush()
	})
}

func TestJoinerContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCounted(t)
		c.hold = 100 * time.Millisecond
		g := mustNew(t, c.fn)
		leader := doAll(g, context.Background(), "k", 1)
		time.Sleep(time.Millisecond)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		defer cancel()
		if _, err := g.Do(ctx, "k"); err != context.DeadlineExceeded {
			t.Fatalf("joiner got %v", err)
		}
		if vs, errs := leader(); vs[0] != 1 || errs[0] != nil {
			t.Fatalf("leader got %v %v", vs, errs)
		}
	})
}

func TestLeaderContextDuringDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCounted(t)
		g := mustNew(t, c.fn, WithDelay(100*time.Millisecond))
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		defer cancel()
		if _, err := g.Do(ctx, "k"); err != context.DeadlineExceeded {
			t.Fatalf("a lone leader got %v", err)
		}
		if len(c.at) != 0 {
			t.Fatalf("a dropped execution ran: %v", c.at)
		}
		// With a joiner, the leader serves it.
		ctx2, cancel2 := context.WithTimeout(context.Background(), 10*time.Millisecond)
		defer cancel2()
		var lv int
		var lerr error
		done := make(chan bool)
		go func() { lv, lerr = g.Do(ctx2, "k"); close(done) }()
		time.Sleep(time.Millisecond)
		j := doAll(g, context.Background(), "k", 1)
		<-done
		if vs, _ := j(); vs[0] != 1 || lv != 1 || lerr != nil {
			t.Fatalf("joiner %v, leader %d %v", vs, lv, lerr)
		}
	})
}

func TestPanic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		boom := errors.New("boom")
		c := newCounted(t)
		c.hold = 10 * time.Millisecond
		var calls atomic.Int32
		c.body = func(string) {
			if calls.Add(1) == 1 {
				time.Sleep(10 * time.Millisecond)
				panic(boom)
			}
		}
		g := mustNew(t, c.fn)
		got := make(chan any, 4)
		for range 4 {
			go func() {
				defer func() { got <- recover() }()
				g.Do(context.Background(), "k")
			}()
		}
		var first *PanicError
		for range 4 {
			pe, ok := (<-got).(*PanicError)
			if !ok || !errors.Is(pe, boom) {
				t.Fatalf("a caller recovered %v", pe)
			}
			if first == nil {
				first = pe
			} else if pe != first {
				t.Error("callers of one execution saw different panics")
			}
		}
		// The key was released: the next call runs fn again.
		if v, err := g.Do(context.Background(), "k"); v != 2 || err != nil {
			t.Fatalf("after a panic: %d %v", v, err)
		}
	})
}

func TestGoexit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := mustNew(t, func(string) (int, error) {
			time.Sleep(10 * time.Millisecond)
			runtime.Goexit()
			return 0, nil
		})
		go g.Do(context.Background(), "k")
		time.Sleep(time.Millisecond)
		if _, err := g.Do(context.Background(), "k"); err != ErrGoexit {
			t.Fatalf("joiner got %v", err)
		}
	})
}

func TestNewRefuses(t *testing.T) {
	var pe *limit.ParamError
	if _, err := New[string, int](nil); !errors.As(err, &pe) || pe.Param != "fn" {
		t.Errorf("nil fn: %v", err)
	}
	if _, err := New(func(string) (int, error) { return 0, nil }, WithDelay(-1)); !errors.As(err, &pe) || pe.Param != "delay" {
		t.Errorf("negative delay: %v", err)
	}
}

func TestJoinerAllocs(t *testing.T) {
	release := make(chan struct{})
	g, _ := New(func(string) (int, error) { <-release; return 1, nil })
	go g.Do(context.Background(), "k")
	for {
		g.mu.Lock()
		_, ok := g.calls["k"]
		g.mu.Unlock()
		if ok {
			break
		}
		runtime.Gosched()
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if a := testing.AllocsPerRun(100, func() { g.Do(ctx, "k") }); a != 0 {
		t.Errorf("a joiner allocates %v times", a)
	}
	close(release)
	g.Stop()
}

func TestConcurrent(t *testing.T) {
	var active [4]atomic.Int32
	var runs atomic.Int64
	g, _ := New(func(k int) (int, error) {
		if active[k].Add(1) != 1 {
			t.Error("two executions of one key at once")
		}
		runs.Add(1)
		runtime.Gosched()
		active[k].Add(-1)
		return k * 10, nil
	})
	n := 5000
	if testing.Short() {
		n = 1000
	}
	var calls atomic.Int64
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range n {
				k := (w + i) % 4
				v, err := g.Do(context.Background(), k)
				calls.Add(1)
				if v != k*10 || err != nil {
					t.Errorf("key %d got %d %v", k, v, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	g.Stop()
	t.Logf("%d calls, %d executions", calls.Load(), runs.Load())
}
