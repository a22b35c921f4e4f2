package chirate

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cellrate/cellrate/limit"
)

func newCounter(t testing.TB, capacity int, window time.Duration) *Counter {
	t.Helper()
	c, err := New(Options{Capacity: capacity})
	if err != nil {
		t.Fatal(err)
	}
	c.Config(10, window)
	return c
}

// The schedule httprate's own counter test runs (increments and window
// moves, on 1,000 keys at once), with the counts it expects.
func TestCounts(t *testing.T) {
	c := newCounter(t, 0, time.Minute)
	cur := time.Now().UTC().Truncate(time.Minute)
	steps := []struct {
		advance          time.Duration
		incr, prev, curr int
	}{
		{0, 0, 0, 0},
		{0, 1, 0, 1},
		{0, 99, 0, 100},
		{time.Minute, 0, 100, 0},
		{0, 20, 100, 20},
		{0, 20, 100, 40},
		{time.Minute, 0, 40, 0},
		{0, 1, 40, 1},
		{0, 9, 40, 10},
		{0, 20, 40, 30},
		{2 * time.Minute, 0, 0, 0},
	}
	const keys = 1000
	for n, s := range steps {
		cur = cur.Add(s.advance)
		var wg sync.WaitGroup
		for i := range keys {
			wg.Add(1)
			go func() {
				defer wg.Done()
				key := fmt.Sprint("key:", i)
				if s.incr > 0 {
					if err := c.IncrementBy(key, cur, s.incr); err != nil {
						t.Errorf("step %d: %v", n, err)
					}
				}
				curr, prev, err := c.Get(key, cur, cur.Add(-time.Minute))
				if err != nil || curr != s.curr || prev != s.prev {
					t.Errorf("step %d %s: Get = %d, %d, %v; want %d, %d", n, key, curr, prev, err, s.curr, s.prev)
				}
			}()
		}
		wg.Wait()
	}
}

// Windows of any length and alignment, and times before 1970: each window
// counts its own increments, the one before is prev, older ones are gone.
func TestWindows(t *testing.T) {
	for _, w := range []time.Duration{time.Millisecond, 7 * time.Second, 3*time.Hour + 1} {
		for _, base := range []time.Time{time.Unix(0, 0), time.Unix(-1e9, 123), time.Unix(1.8e9, 5)} {
			c := newCounter(t, 0, w)
			start := base.Truncate(w)
			for i := range 4 {
				cur := start.Add(time.Duration(i) * w)
				if err := c.IncrementBy("k", cur, i+1); err != nil {
					t.Fatal(err)
				}
				curr, prev, err := c.Get("k", cur, cur.Add(-w))
				if err != nil || curr != i+1 || prev != i {
					t.Fatalf("window %v from %v, window %d: Get = %d, %d, %v; want %d, %d", w, base, i, curr, prev, err, i+1, i)
				}
			}
		}
	}
}

func TestMaxCount(t *testing.T) {
	c := newCounter(t, 0, time.Minute)
	cur := time.Unix(600, 0)
	if err := c.IncrementBy("k", cur, MaxCount-5); err != nil {
		t.Fatal(err)
	}
	if err := c.IncrementBy("k", cur.Add(time.Minute), 6); !errors.Is(err, ErrCount) {
		t.Fatalf("past MaxCount over two windows: %v", err)
	}
	if err := c.IncrementBy("k", cur.Add(time.Minute), 5); err != nil {
		t.Fatal(err)
	}
	if curr, prev, _ := c.Get("k", cur.Add(time.Minute), cur); curr != 5 || prev != MaxCount-5 {
		t.Fatalf("Get = %d, %d", curr, prev)
	}
	if err := c.IncrementBy("k", cur, -1); !errors.Is(err, ErrNegative) {
		t.Fatalf("a negative amount: %v", err)
	}
	if err := c.IncrementBy("fresh", cur, MaxCount+1); !errors.Is(err, ErrCount) {
		t.Fatalf("one amount past MaxCount: %v", err)
	}
}

func TestErrors(t *testing.T) {
	c, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Increment("k", time.Now()); !errors.Is(err, ErrNotConfigured) {
		t.Fatalf("before Config: %v", err)
	}
	var pe *limit.ParamError
	if _, err := New(Options{Capacity: 2}); !errors.As(err, &pe) || pe.Param != "capacity" {
		t.Fatalf("capacity 2: %v", err)
	}
	c.Config(10, 0)
	if _, _, err := c.Get("k", time.Now(), time.Now()); !errors.As(err, &pe) || pe.Param != "window" {
		t.Fatalf("a window of 0: %v", err)
	}
	c.Config(10, time.Second)
	if err := c.Increment("k", time.Unix(0, 1<<63-1)); !errors.As(err, &pe) {
		t.Fatalf("the last window of int64 time: %v", err)
	}
	if err := c.Increment("k", time.Unix(600, 0)); err != nil {
		t.Fatalf("after a Config out of range, one in range: %v", err)
	}
}

// Many goroutines incrementing many keys across windows: every count is
// exactly what was added.
func TestExactConcurrent(t *testing.T) {
	const keys, workers, per = 50, 16, 40
	c := newCounter(t, 0, time.Second)
	w0 := time.Unix(1000, 0)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per * keys {
				k := (i + w) % keys
				win := w0.Add(time.Duration(i%2) * time.Second)
				if err := c.IncrementBy(fmt.Sprint(k), win, 1+k%3); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	for k := range keys {
		curr, prev, err := c.Get(fmt.Sprint(k), w0.Add(time.Second), w0)
		want := workers * per / 2 * (1 + k%3)
		if err != nil || curr != want || prev != want {
			t.Errorf("key %d: Get = %d, %d, %v; want %d, %d", k, curr, prev, err, want, want)
		}
	}
}

// A second Config (a Counter given to two RateLimiters, say) never
// forgets counts: with the same window it keeps them, with another every
// later call fails with ErrReconfigured, for good.
func TestConfigAgain(t *testing.T) {
	c := newCounter(t, 0, time.Minute)
	w := time.Unix(6000, 0)
	if err := c.IncrementBy("k", w, 7); err != nil {
		t.Fatal(err)
	}
	c.Config(99, time.Minute)
	if curr, _, err := c.Get("k", w, w.Add(-time.Minute)); err != nil || curr != 7 {
		t.Fatalf("after a second Config of the same window: %d, %v; want the 7 counted", curr, err)
	}
	c.Config(10, time.Second)
	c.Config(10, time.Minute)
	if _, _, err := c.Get("k", w, w.Add(-time.Minute)); !errors.Is(err, ErrReconfigured) {
		t.Fatalf("after a Config of another window: %v", err)
	}
	if err := c.Increment("k", w); !errors.Is(err, ErrReconfigured) {
		t.Fatalf("after a Config of another window: %v", err)
	}
}

// An increment of 0 (httprate.WithIncrement(ctx, 0)) succeeds and counts
// nothing: not for a key the table holds, nor for a new key, which takes
// no room.
func TestZeroAmount(t *testing.T) {
	c := newCounter(t, 8, time.Minute)
	w := time.Unix(600, 0)
	if err := c.IncrementBy("k", w, 3); err != nil {
		t.Fatal(err)
	}
	if err := c.IncrementBy("k", w, 0); err != nil {
		t.Fatalf("0 for a key the table holds: %v", err)
	}
	if curr, prev, err := c.Get("k", w, w.Add(-time.Minute)); err != nil || curr != 3 || prev != 0 {
		t.Fatalf("Get = %d, %d, %v; want 3, 0", curr, prev, err)
	}
	for i := range 100 {
		if err := c.IncrementBy(fmt.Sprint("new-", i), w, 0); err != nil {
			t.Fatalf("0 for new key %d: %v", i, err)
		}
	}
	for i := range 7 {
		if err := c.Increment(fmt.Sprint("key-", i), w); err != nil {
			t.Fatalf("key %d of the 7 the table still has room for: %v", i, err)
		}
	}
	if err := c.Increment("one-too-many", w); !errors.Is(err, ErrFull) {
		t.Fatalf("a ninth key in a table of 8: %v, want ErrFull", err)
	}
	if err := c.IncrementBy("one-too-many", w, 0); err != nil {
		t.Fatalf("0 for a new key with the table full: %v", err)
	}
	if curr, prev, err := c.Get("new-0", w, w.Add(-time.Minute)); err != nil || curr != 0 || prev != 0 {
		t.Fatalf("a key incremented by 0: Get = %d, %d, %v; want 0, 0", curr, prev, err)
	}
}

// Config from many goroutines at once, as RateLimiters made concurrently
// sharing one Counter would call it: with one window, one table is made
// and every increment made meanwhile counts; with two windows, every
// later call fails with ErrReconfigured, whichever came first.
func TestConfigConcurrent(t *testing.T) {
	c, err := New(Options{Capacity: 8})
	if err != nil {
		t.Fatal(err)
	}
	w := time.Unix(6000, 0)
	const workers, each = 8, 200
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Config(10, time.Minute)
			for range each {
				if err := c.Increment("k", w); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if curr, _, err := c.Get("k", w, w.Add(-time.Minute)); err != nil || curr != workers*each {
		t.Fatalf("Get = %d, %v; want %d", curr, err, workers*each)
	}

	for range 50 {
		c, err := New(Options{Capacity: 8})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range []time.Duration{time.Minute, time.Second} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c.Config(10, d)
			}()
		}
		wg.Wait()
		if err := c.Increment("k", w); !errors.Is(err, ErrReconfigured) {
			t.Fatalf("after Configs of two windows at once: %v, want ErrReconfigured", err)
		}
	}
}

// The zero Counter (not made by New) fails closed: every call returns
// ErrNotConfigured, and after Config the error of its capacity of 0.
func TestZeroCounter(t *testing.T) {
	var c Counter
	w := time.Unix(600, 0)
	if err := c.Increment("k", w); !errors.Is(err, ErrNotConfigured) {
		t.Fatalf("before Config: %v", err)
	}
	c.Config(10, time.Minute)
	var pe *limit.ParamError
	if err := c.Increment("k", w); !errors.As(err, &pe) || pe.Param != "capacity" {
		t.Fatalf("after Config: %v, want a ParamError for the capacity", err)
	}
	if curr, prev, err := c.Get("k", w, w.Add(-time.Minute)); !errors.As(err, &pe) || curr != 0 || prev != 0 {
		t.Fatalf("after Config: Get = %d, %d, %v", curr, prev, err)
	}
}

// Capacity, as its doc says: at least 4, at most 2^32, rounded up to a
// multiple of 4, that many keys counted at once and no more.
func TestCapacity(t *testing.T) {
	var pe *limit.ParamError
	past := []int{-1, 1, 3}
	if over := int64(1)<<32 + 1; int64(int(over)) == over { // 64-bit int
		past = append(past, int(over))
	}
	for _, n := range past {
		if _, err := New(Options{Capacity: n}); !errors.As(err, &pe) || pe.Param != "capacity" {
			t.Errorf("capacity %d: %v", n, err)
		}
	}
	for _, tc := range []struct{ capacity, keys int }{{4, 4}, {5, 8}, {8, 8}} {
		c := newCounter(t, tc.capacity, time.Minute)
		w := time.Unix(600, 0)
		for i := range tc.keys {
			if err := c.Increment(fmt.Sprint("key-", i), w); err != nil {
				t.Fatalf("capacity %d, key %d: %v", tc.capacity, i, err)
			}
		}
		if err := c.Increment("one-too-many", w); !errors.Is(err, ErrFull) {
			t.Errorf("capacity %d, key %d: %v, want ErrFull", tc.capacity, tc.keys, err)
		}
	}
}
