package concurrency

import (
	"context"
	"errors"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cellrate/cellrate/limit"
)

func mustFixed(t testing.TB, n int) *Limiter {
	t.Helper()
	l, err := NewFixed(n)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestFixedAdmitsExactlyN(t *testing.T) {
	l := mustFixed(t, 3)
	var toks []Token
	for range 3 {
		tok, ok := l.TryAcquire()
		if !ok {
			t.Fatal("refused below the limit")
		}
		toks = append(toks, tok)
	}
	if _, ok := l.TryAcquire(); ok {
		t.Fatal("admitted a 4th at limit 3")
	}
	if l.InFlight() != 3 {
		t.Fatalf("in flight %d", l.InFlight())
	}
	if !toks[0].Release(Success) {
		t.Fatal("first release refused")
	}
	if _, ok := l.TryAcquire(); !ok {
		t.Fatal("refused after a release")
	}
}

func TestReleaseExactlyOnce(t *testing.T) {
	l := mustFixed(t, 2)
	tok, _ := l.TryAcquire()
	cp := tok
	if !tok.Release(Success) {
		t.Fatal("release refused")
	}
	if tok.Release(Success) || cp.Release(Dropped) {
		t.Fatal("a second release of the same token released")
	}
	if l.InFlight() != 0 {
		t.Fatalf("in flight %d after a double release", l.InFlight())
	}
	// The slot is reused by a later token: the stale copy must not free it.
	var held []Token
	for range 2 {
		t2, ok := l.TryAcquire()
		if !ok {
			t.Fatal("refused")
		}
		held = append(held, t2)
	}
	if cp.Release(Success) || tok.Release(Success) {
		t.Fatal("a stale token freed a reused slot")
	}
	if l.InFlight() != 2 || l.slots.busy() != 2 {
		t.Fatalf("in flight %d, busy %d", l.InFlight(), l.slots.busy())
	}
	for _, h := range held {
		if !h.Release(Success) {
			t.Fatal("a live token's release refused after a stale one")
		}
	}
	if (Token{}).Release(Success) {
		t.Fatal("the zero Token released")
	}
}

func TestZeroLimiterFailsSafe(t *testing.T) {
	var l Limiter
	if _, ok := l.TryAcquire(); ok {
		t.Fatal("zero Limiter admitted")
	}
	if _, ok := l.TryAcquireAt(1); ok {
		t.Fatal("zero Limiter admitted")
	}
	if _, err := l.Acquire(context.Background()); !errors.Is(err, ErrZero) {
		t.Fatalf("Acquire on zero: %v", err)
	}
}

func TestParams(t *testing.T) {
	bad := []struct {
		param string
		mk    func() (*Limiter, error)
	}{
		{"limit", func() (*Limiter, error) { return NewFixed(0) }},
		{"limit", func() (*Limiter, error) { return NewFixed(maxLimit + 1) }},
		{"max", func() (*Limiter, error) { return New(WithLimits(1, 1, 0)) }},
		{"min", func() (*Limiter, error) { return New(WithLimits(5, 11, 10)) }},
		{"initial", func() (*Limiter, error) { return New(WithLimits(11, 1, 10)) }},
		{"minDur", func() (*Limiter, error) { return New(WithWindow(0, time.Second, 1)) }},
		{"maxDur", func() (*Limiter, error) { return New(WithWindow(time.Second, time.Millisecond, 1)) }},
		{"minSamples", func() (*Limiter, error) { return New(WithWindow(1, 1, 0)) }},
		{"clock", func() (*Limiter, error) { return New(WithClock(nil)) }},
		{"clock", func() (*Limiter, error) { return NewFixed(1, WithClock(nil)) }},
		{"option", func() (*Limiter, error) { return New(WithClock(zeroClock), nil) }},
		{"option", func() (*Limiter, error) { return NewFixed(1, nil) }},
		{"alpha", func() (*Limiter, error) { return New(WithVegas(-0.1, 0)) }},
		{"beta", func() (*Limiter, error) { return New(WithVegas(0.5, 0.2)) }},
		{"backoff", func() (*Limiter, error) { return New(WithBackoff(1)) }},
		{"smoothing", func() (*Limiter, error) { return New(WithSmoothing(2)) }},
		{"history", func() (*Limiter, error) { return New(WithHistory(1<<16 + 1)) }},
		{"tolerance", func() (*Limiter, error) { return New(WithGradient(0.5, 0)) }},
		{"headroom", func() (*Limiter, error) { return New(WithGradient(0, 1.5)) }},
		{"smoothing", func() (*Limiter, error) { return New(WithGradient(0, 0), WithSmoothing(-1)) }},
		{"history", func() (*Limiter, error) { return New(WithGradient(0, 0), WithHistory(-1)) }},
		{"backoff", func() (*Limiter, error) { return New(WithGradient(0, 0), WithBackoff(0.05)) }},
		{"backoff", func() (*Limiter, error) { return New(WithGradient(0, 0), WithBackoff(1)) }},
		{"increase", func() (*Limiter, error) { return New(WithAIMD(-1, 0)) }},
		{"threshold", func() (*Limiter, error) { return New(WithAIMD(0, -1)) }},
		{"backoff", func() (*Limiter, error) { return New(WithAIMD(0, 0), WithBackoff(1)) }},
		{"option", func() (*Limiter, error) { return New(WithAIMD(0, 0), WithSmoothing(0.5)) }},
		{"option", func() (*Limiter, error) { return New(WithHistory(10), WithAIMD(0, 0)) }},
		{"option", func() (*Limiter, error) { return NewFixed(1, WithVegas(0, 0)) }},
		{"option", func() (*Limiter, error) { return NewFixed(1, WithBackoff(0.5)) }},
	}
	for _, b := range bad {
		l, err := b.mk()
		var pe *limit.ParamError
		if l != nil || !errors.As(err, &pe) || pe.Param != b.param || pe.Pkg != "concurrency" {
			t.Errorf("%s: got %v, %v", b.param, l, err)
		}
	}
	for _, opt := range []Option{WithVegas(0, 1), WithGradient(10, 1), WithAIMD(1<<20, time.Second), WithBackoff(0.1), WithSmoothing(1), WithHistory(1 << 16)} {
		if _, err := New(opt, WithLimits(1, 1, 1)); err != nil {
			t.Fatal(err)
		}
	}
	// The largest limit is allowed, fixed or adaptive.
	if l, err := NewFixed(maxLimit); err != nil || l.Limit() != maxLimit {
		t.Fatalf("NewFixed(%d): %v", maxLimit, err)
	}
	if _, err := New(WithLimits(1, 1, maxLimit)); err != nil {
		t.Fatalf("a max of %d: %v", maxLimit, err)
	}
}

// TestOptionsPick: New's options build the algorithm they name, with
// their parameters, zeros taking the defaults; New alone is Vegas.
func TestOptionsPick(t *testing.T) {
	cases := []struct {
		opts []Option
		want algorithm
	}{
		{nil, &vegas{}},
		{[]Option{WithVegas(0.2, 0.4), WithSmoothing(0.3), WithBackoff(0.8), WithHistory(7)},
			&vegas{Alpha: 0.2, Beta: 0.4, Smoothing: 0.3, Backoff: 0.8, History: 7}},
		{[]Option{WithHistory(9), WithGradient(2, 0.1), WithSmoothing(0.6), WithBackoff(0.7)},
			&gradient{Tolerance: 2, Headroom: 0.1, Smoothing: 0.6, Backoff: 0.7, History: 9}},
		{[]Option{WithBackoff(0.5), WithAIMD(3, time.Second)}, &aimd{Increase: 3, Backoff: 0.5, Threshold: time.Second}},
		{[]Option{WithAIMD(3, time.Second), WithGradient(0, 0)}, &gradient{}},
	}
	for i, c := range cases {
		l, err := New(c.opts...)
		if err != nil {
			t.Fatal(i, err)
		}
		if !reflect.DeepEqual(l.alg, c.want) {
			t.Errorf("case %d: %#v, want %#v", i, l.alg, c.want)
		}
	}
	// One Option value serves many Limiters: each gets its own state.
	opt := WithGradient(0, 0)
	a, _ := New(opt)
	b, _ := New(opt)
	if a.alg == b.alg {
		t.Fatal("two Limiters share one algorithm's state")
	}
	if l, err := NewFixed(3, WithClock(zeroClock)); err != nil || l.alg != nil || l.Limit() != 3 {
		t.Fatalf("NewFixed: %v, %v", l, err)
	}
}

// newWith is New with an algorithm of the test's own (nil: a fixed limit).
func newWith(alg algorithm, opts ...Option) (*Limiter, error) {
	c, err := configure(opts)
	if err != nil {
		return nil, err
	}
	return build(c, alg), nil
}

// TestInFlightExact hammers a small limit from many goroutines and checks,
// inside every hold, that no more than the limit are held at once, and at
// the end that every slot came back.
func TestInFlightExact(t *testing.T) {
	const lim, workers = 4, 32
	iters := 2000
	if testing.Short() {
		iters = 300
	}
	for _, alg := range []algorithm{nil, &vegas{}, &gradient{}, &aimd{}} {
		l, err := newWith(alg, WithLimits(lim, lim, lim), WithWindow(1, 1, 1))
		if err != nil {
			t.Fatal(err)
		}
		var held, peak atomic.Int64
		var wg sync.WaitGroup
		for g := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range iters {
					var tok Token
					if g%2 == 0 {
						var ok bool
						if tok, ok = l.TryAcquire(); !ok {
							continue
						}
					} else {
						// A lost wakeup would block here: fail instead.
						ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
						var err error
						tok, err = l.Acquire(ctx)
						cancel()
						if err != nil {
							t.Error(err)
							return
						}
					}
					h := held.Add(1)
					for p := peak.Load(); h > p && !peak.CompareAndSwap(p, h); p = peak.Load() {
					}
					if i%7 == 0 {
						runtime.Gosched()
					}
					held.Add(-1)
					tok.Release(Outcome(i % 3))
					tok.Release(Success) // a second release must change nothing
				}
			}()
		}
		wg.Wait()
		if p := peak.Load(); p > lim {
			t.Errorf("%T: %d held at once, limit %d", alg, p, lim)
		}
		if l.InFlight() != 0 || l.slots.busy() != 0 {
			t.Errorf("%T: leak: in flight %d, busy slots %d", alg, l.InFlight(), l.slots.busy())
		}
	}
}

func TestAcquireCancelledLeavesNothing(t *testing.T) {
	l := mustFixed(t, 1)
	tok, _ := l.TryAcquire()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := l.Acquire(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire on a full limiter: %v", err)
	}
	if l.InFlight() != 1 || l.w.n.Load() != 0 {
		t.Fatalf("in flight %d, waiters %d after a cancelled wait", l.InFlight(), l.w.n.Load())
	}
	tok.Release(Success)
	if l.InFlight() != 0 {
		t.Fatal("leak")
	}
	if _, ok := l.TryAcquire(); !ok {
		t.Fatal("slot lost to the cancelled wait")
	}
}

func TestAcquireWakesOnRelease(t *testing.T) {
	l := mustFixed(t, 1)
	tok, _ := l.TryAcquire()
	got := make(chan error, 1)
	go func() {
		t2, err := l.Acquire(context.Background())
		if err == nil {
			t2.Release(Success)
		}
		got <- err
	}()
	for l.w.n.Load() == 0 {
		runtime.Gosched()
	}
	tok.Release(Success)
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("waiter never woken by the release")
	}
}

// TestCancelRaceKeepsWakeups cancels waiters while slots are released, and
// checks the remaining waiters still all get in: a wakeup swallowed by a
// cancelled waiter would leave one blocked forever.
func TestCancelRaceKeepsWakeups(t *testing.T) {
	rounds := 200
	if testing.Short() {
		rounds = 40
	}
	for range rounds {
		l := mustFixed(t, 1)
		tok, _ := l.TryAcquire()
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := context.Background()
				if i%2 == 0 {
					c = ctx
				}
				t2, err := l.Acquire(c)
				if err == nil {
					t2.Release(Success)
				} else if i%2 != 0 {
					errs <- err
				}
			}()
		}
		for l.w.n.Load() < 4 {
			runtime.Gosched()
		}
		go cancel()
		tok.Release(Success)
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("a waiter was never admitted")
		}
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if l.InFlight() != 0 || l.slots.busy() != 0 {
			t.Fatalf("leak: %d", l.InFlight())
		}
	}
}

func TestDoReleasesOnPanic(t *testing.T) {
	l := mustFixed(t, 1)
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("Do swallowed the panic")
			}
		}()
		_ = l.Do(context.Background(), func() error { panic("boom") }, nil)
	}()
	if l.InFlight() != 0 {
		t.Fatal("a panic leaked the slot")
	}
	want := errors.New("x")
	if err := l.Do(context.Background(), func() error { return want }, nil); err != want {
		t.Fatalf("Do returned %v", err)
	}
	if l.InFlight() != 0 {
		t.Fatal("an error leaked the slot")
	}
}

func TestAcquireReleaseAllocs(t *testing.T) {
	for _, alg := range []algorithm{nil, &vegas{}} {
		l, err := newWith(alg, WithLimits(4, 4, 4), WithWindow(time.Hour, time.Hour, 1<<30))
		if err != nil {
			t.Fatal(err)
		}
		n := testing.AllocsPerRun(200, func() {
			tok, ok := l.TryAcquire()
			if !ok || !tok.Release(Success) {
				t.Fatal("refused")
			}
			tok, err := l.Acquire(context.Background())
			if err != nil || !tok.Release(Dropped) {
				t.Fatal("refused")
			}
		})
		if n != 0 {
			t.Errorf("%T: %v allocations per acquire and release", alg, n)
		}
	}
}

// TestLeakDetected: a token that is never released stays counted, so the
// leak checks of the other tests would see it.
func TestLeakDetected(t *testing.T) {
	l := mustFixed(t, 2)
	l.TryAcquire() // forgotten
	tok, _ := l.TryAcquire()
	tok.Release(Success)
	if l.InFlight() != 1 || l.slots.busy() != 1 {
		t.Fatalf("a forgotten token: in flight %d, busy %d", l.InFlight(), l.slots.busy())
	}
}

// TestDropsBeforeAFallIgnored: once the limit has fallen, drops of
// requests admitted before the fall are samples, not losses; a drop of a
// request admitted after it backs off again.
func TestDropsBeforeAFallIgnored(t *testing.T) {
	l, err := newWith(&aimd{}, WithLimits(10, 1, 100), WithWindow(1, 1, 1), WithClock(zeroClock))
	if err != nil {
		t.Fatal(err)
	}
	var toks []Token
	for range 6 {
		tok, _ := l.TryAcquireAt(0)
		toks = append(toks, tok)
	}
	toks[0].ReleaseAt(10, Dropped)
	fell := l.limitFloat()
	if fell != 9 {
		t.Fatalf("limit %v after a drop, want 9", fell)
	}
	for i, tok := range toks[1:] {
		tok.ReleaseAt(int64(20+10*i), Dropped)
		if l.limitFloat() < fell {
			t.Fatalf("a drop admitted before the fall backed off again: %v", l.limitFloat())
		}
	}
	before := l.limitFloat()
	tok, _ := l.TryAcquireAt(100)
	tok.ReleaseAt(110, Dropped)
	if l.limitFloat() >= before {
		t.Fatalf("a drop admitted after the fall did not back off: %v", l.limitFloat())
	}
}

// TestSlotFreeOutOfRange: freeing a slot index outside the table frees
// nothing and does not panic; freeing with a stale generation frees
// nothing either.
func TestSlotFreeOutOfRange(t *testing.T) {
	s := newSlots(2)
	i, gen := s.take()
	for _, j := range []int{-1, len(s), len(s) + 1} {
		if s.free(j, gen) {
			t.Errorf("free(%d) of a %d-slot table reported a release", j, len(s))
		}
	}
	if s.free(i, gen+1) || s.busy() != 1 {
		t.Fatalf("free with another generation: busy %d", s.busy())
	}
	if !s.free(i, gen) || s.busy() != 0 {
		t.Fatalf("free of the taken slot: busy %d", s.busy())
	}
}
