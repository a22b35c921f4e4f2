package ulule

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/nanotime"
	limiter "github.com/ulule/limiter/v3"
	"github.com/ulule/limiter/v3/drivers/store/tests"
)

func newStore(t testing.TB, o Options) *Store {
	t.Helper()
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// ulule's own concurrency test for stores, pointed at this one: 500
// goroutines, 500 Gets each, at 100,000 per 10 seconds.
func TestLibraryConcurrentAccess(t *testing.T) {
	if testing.Short() {
		t.Skip("250,000 Gets; TestConcurrentAccess runs a smaller drive")
	}
	s := newStore(t, Options{})
	if _, err := s.Get(context.Background(), "probe", limiter.Rate{Limit: 100000, Period: 10 * time.Second}); err != nil {
		// Its goroutines call FailNow on an error and then never finish.
		t.Fatalf("the rate ulule's test uses: %v", err)
	}
	tests.TestStoreConcurrentAccess(t, s)
}

// ulule's concurrency test, smaller, checking also that every Get is
// admitted and counted.
func TestConcurrentAccess(t *testing.T) {
	l := limiter.New(newStore(t, Options{}), limiter.Rate{Limit: 30000, Period: 10 * time.Second})
	start := time.Now()
	var wg sync.WaitGroup
	for range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 250 {
				if c, err := l.Get(context.Background(), "foo"); err != nil || c.Reached || c.Limit != 30000 {
					t.Errorf("Get = %+v, %v", c, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	refilled := int64(time.Since(start) * 30000 / (10 * time.Second))
	if c, _ := l.Peek(context.Background(), "foo"); c.Remaining > 30000-25000+refilled+1 {
		t.Fatalf("after 25,000 Gets and %d units refilled: %+v", refilled, c)
	}
}

func want(t *testing.T, what string, c limiter.Context, err error, remaining int64, reached bool) {
	t.Helper()
	if err != nil || c.Limit != 3 || c.Remaining != remaining || c.Reached != reached {
		t.Fatalf("%s = %+v, %v; want limit 3, remaining %d, reached %v", what, c, err, remaining, reached)
	}
	if d := c.Reset - time.Now().Unix(); d < 0 || d > 61 {
		t.Fatalf("%s: reset in %ds", what, d)
	}
}

// The sequence ulule's sequential store test runs (3 a minute: Peek, Get,
// Peek six times, then Reset and Peek), with its one difference: a Peek
// with no unit left is Reached.
func TestSequential(t *testing.T) {
	l := limiter.New(newStore(t, Options{}), limiter.Rate{Limit: 3, Period: time.Minute})
	ctx := context.Background()
	for i := int64(1); i <= 6; i++ {
		if i <= 3 {
			c, err := l.Peek(ctx, "foo")
			want(t, "Peek", c, err, 3-(i-1), false)
		}
		c, err := l.Get(ctx, "foo")
		if i <= 3 {
			want(t, "Get", c, err, 3-i, false)
			c, err = l.Peek(ctx, "foo")
			want(t, "Peek", c, err, 3-i, i == 3) // the memory store: false
		} else {
			want(t, "Get", c, err, 0, true)
		}
	}
	c, err := l.Peek(ctx, "foo")
	want(t, "Peek", c, err, 0, true)
	for range 2 {
		c, err = l.Reset(ctx, "foo")
		want(t, "Reset", c, err, 3, false)
		c, err = l.Peek(ctx, "foo")
		want(t, "Peek", c, err, 3, false)
		c, err = l.Get(ctx, "foo")
		want(t, "Get", c, err, 2, false)
	}
}

func TestIncrement(t *testing.T) {
	l := limiter.New(newStore(t, Options{}), limiter.Rate{Limit: 3, Period: time.Minute})
	ctx := context.Background()
	c, err := l.Increment(ctx, "k", 2)
	want(t, "Increment 2", c, err, 1, false)
	c, err = l.Increment(ctx, "k", 2)
	want(t, "Increment 2 past the limit", c, err, 0, true)
	c, err = l.Increment(ctx, "k", 0)
	want(t, "Increment 0", c, err, 1, false) // the refused 2 took nothing
	c, err = l.Increment(ctx, "k", 4)
	want(t, "Increment over the limit", c, err, 0, true)
	if _, err := l.Increment(ctx, "k", -1); !errors.Is(err, ErrNegativeCount) {
		t.Fatalf("Increment -1: %v", err)
	}
	c, err = l.Get(ctx, "k")
	want(t, "Get", c, err, 0, false)
	c, err = l.Increment(ctx, "k", 0)
	want(t, "Increment 0 with nothing left (Peek)", c, err, 0, true)
}

// The bucket refills one unit a Period/Limit, and Reset says when it is full.
func TestRefill(t *testing.T) {
	s := newStore(t, Options{})
	r := limiter.Rate{Limit: 2, Period: 20 * time.Millisecond}
	ctx := context.Background()
	for range 2 {
		s.Get(ctx, "k", r)
	}
	time.Sleep(25 * time.Millisecond)
	c, err := s.Peek(ctx, "k", r)
	if err != nil || c.Remaining != 2 {
		t.Fatalf("Peek a period later = %+v, %v; want 2 remaining", c, err)
	}
}

func TestRates(t *testing.T) {
	s := newStore(t, Options{MaxRates: 2})
	ctx := context.Background()
	a, b := limiter.Rate{Limit: 1, Period: time.Hour}, limiter.Rate{Limit: 2, Period: time.Hour}
	if c, _ := s.Get(ctx, "k", a); c.Reached {
		t.Fatal("refused under a")
	}
	if c, _ := s.Get(ctx, "k", b); c.Reached || c.Remaining != 1 {
		t.Fatalf("under b: %+v; want each rate apart", c)
	}
	if _, err := s.Get(ctx, "k", limiter.Rate{Limit: 3, Period: time.Hour}); !errors.Is(err, ErrTooManyRates) {
		t.Fatalf("a third rate: %v", err)
	}
	var pe *limit.ParamError
	if _, err := s.Get(ctx, "k", limiter.Rate{Limit: 0, Period: time.Hour}); !errors.As(err, &pe) {
		t.Fatalf("a limit of 0: %v", err)
	}
	if _, err := New(Options{Capacity: -1}); !errors.As(err, &pe) || pe.Param != "capacity" {
		t.Fatalf("New with capacity -1: %v", err)
	}
	if _, err := New(Options{MaxRates: -1}); !errors.As(err, &pe) || pe.Param != "max rates" {
		t.Fatalf("New with MaxRates -1: %v", err)
	}
	if _, err := New(Options{MaxResets: -1}); !errors.As(err, &pe) || pe.Param != "max resets" {
		t.Fatalf("New with MaxResets -1: %v", err)
	}
}

// Reset forgets what a key took, for every Rate, and nothing of other keys;
// past MaxResets a paid key goes back to its state before its Reset.
func TestReset(t *testing.T) {
	s := newStore(t, Options{MaxResets: 2})
	ctx := context.Background()
	r := limiter.Rate{Limit: 1, Period: time.Hour}
	for _, k := range []string{"a", "b", "c"} {
		s.Get(ctx, k, r)
	}
	s.Reset(ctx, "a", r)
	s.Reset(ctx, "b", r)
	for k, reached := range map[string]bool{"a": false, "b": false, "c": true} {
		if c, _ := s.Peek(ctx, k, r); c.Reached != reached {
			t.Fatalf("%s after Reset of a and b: %+v", k, c)
		}
	}
	// A third: a, the first remembered and paid (its new name unused),
	// goes back to its old name.
	if _, err := s.Reset(ctx, "c", r); err != nil {
		t.Fatal(err)
	}
	for k, reached := range map[string]bool{"a": true, "b": false, "c": false} {
		if c, _ := s.Peek(ctx, k, r); c.Reached != reached {
			t.Fatalf("%s after Reset of c past MaxResets: %+v", k, c)
		}
	}
}

// Many goroutines on many keys: each key gets exactly its limit, never
// more (the period is far longer than the test).
func TestBoundConcurrent(t *testing.T) {
	const keys, workers, lim = 64, 16, 9
	s := newStore(t, Options{})
	r := limiter.Rate{Limit: lim, Period: time.Hour}
	ctx := context.Background()
	var got [keys]int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine [keys]int64
			for i := range 3 * lim * keys {
				k := (i + w) % keys
				n := int64(1 + i%2)
				if c, err := s.Increment(ctx, fmt.Sprint(k), n, r); err != nil {
					t.Error(err)
				} else if !c.Reached {
					mine[k] += n
				}
			}
			mu.Lock()
			for k := range mine {
				got[k] += mine[k]
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	for k, n := range got {
		if n > lim || n < lim-1 {
			t.Errorf("key %d admitted %d units, want %d (or %d when a 2 found 1 left)", k, n, lim, lim-1)
		}
	}
}

// A Context's Reset is the Unix second at which the bucket is full again,
// rounded up: exactly on a whole second, a nanosecond before and after it,
// for full buckets and buckets short of units (an hour, and 1/3 s, to wait).
func TestContextReset(t *testing.T) {
	const sec = int64(time.Second)
	s := newStore(t, Options{})
	hourly, err := s.tableFor(limiter.Rate{Limit: 1, Period: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	thirds, err := s.tableFor(limiter.Rate{Limit: 3, Period: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	now := nanotime.Now()
	u := s.wall.Unix(now)
	edge := now - u%sec // the reading the same offset puts on a whole second
	for _, at := range []int64{edge - 1, edge, edge + 1} {
		unix := s.wall.Unix(at)
		if unix != u-(now-at) {
			t.Fatalf("the offset changed within a second: Unix(%d) = %d, want %d", at, unix, u-(now-at))
		}
		for _, c := range []struct {
			t               *table
			remaining, wait int64
		}{
			{hourly, 1, 0},
			{hourly, 0, int64(time.Hour)},
			{thirds, 3, 0},
			{thirds, 2, 333_333_334},
		} {
			full := unix + c.wait
			want := full / sec
			if full%sec != 0 {
				want++
			}
			if got := s.context(c.t, at, c.remaining, false); got.Reset != want || got.Remaining != c.remaining || got.Limit != int64(c.t.limit) {
				t.Errorf("%d per %v, %d remaining, %dns past a whole second: %+v; want Reset %d", c.t.limit, time.Duration(c.t.period), c.remaining, at-edge, got, want)
			}
		}
	}
}

// The longest Period keyed takes (2^62 ns, 146 years) reports its Reset
// 146 years on, not wrapped into the past.
func TestResetLongestPeriod(t *testing.T) {
	const longest = 1 << 62
	s := newStore(t, Options{})
	before := time.Now().Unix()
	c, err := s.Get(context.Background(), "k", limiter.Rate{Limit: 1, Period: longest})
	after := time.Now().Unix()
	if err != nil || c.Remaining != 0 {
		t.Fatalf("Get = %+v, %v", c, err)
	}
	if lo, hi := before+longest/int64(time.Second), after+longest/int64(time.Second)+2; c.Reset < lo || c.Reset > hi {
		t.Fatalf("Reset %d, want %d to %d", c.Reset, lo, hi)
	}
	if _, err := s.Get(context.Background(), "k", limiter.Rate{Limit: 1, Period: longest + 1}); err == nil {
		t.Fatal("a Period past 2^62 ns was taken")
	}
}
