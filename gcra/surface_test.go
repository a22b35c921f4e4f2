package gcra

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cellrate/cellrate/internal/bound"
	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/nanotime"
)

// TestEndOfTime: the end-of-time rule of the package doc, at both ends of
// int64.
func TestEndOfTime(t *testing.T) {
	l, _ := New(1, time.Second, 2)
	if l.AllowAt(math.MaxInt64) {
		t.Fatal("admitted at MaxInt64: the TAT would pass the end of time")
	}
	if r, _ := l.AllowNAt(math.MaxInt64, 1); r.OK || r.RetryAfter != limit.Never || r.Remaining != 2 {
		t.Fatalf("AllowNAt(MaxInt64, 1) = %+v, want denied, Never, 2 remaining", r)
	}
	if res, err := l.ReserveNAt(math.MaxInt64, 1); err != nil || res.OK || res.Wait != limit.Never {
		t.Fatalf("ReserveAt(MaxInt64, 1) = %+v, %v", res, err)
	}
	// One second and two steps (of 1 ns here) before the end, one event's
	// TAT still fits; a second not, nor one a step later on a fresh limiter
	// (a Limiter keeps the last two steps for SetRate).
	edge := int64(math.MaxInt64 - int64(time.Second) - 2)
	if l2, _ := New(1, time.Second, 2); l2.AllowAt(edge + 1) {
		t.Fatal("admitted a TAT into the last two steps")
	}
	if !l.AllowAt(edge) {
		t.Fatal("refused with the TAT exactly fitting")
	}
	if l.AllowAt(edge) {
		t.Fatal("admitted a TAT past the end")
	}
	if got := l.RemainingAt(math.MaxInt64); got != 2 {
		t.Fatalf("RemainingAt(MaxInt64) = %d, want 2", got)
	}
	// The start of time is an ordinary instant.
	l, _ = New(1, time.Second, 2)
	for i := range 3 {
		if l.AllowAt(math.MinInt64) != (i < 2) {
			t.Fatalf("MinInt64, event %d: want exactly the burst", i)
		}
	}
	if r, _ := l.AllowNAt(math.MinInt64, 1); r.RetryAfter != time.Second {
		t.Fatalf("RetryAfter at MinInt64 = %d", r.RetryAfter)
	}
	if tok := l.TokensAt(math.MinInt64); tok != 0 {
		t.Fatalf("TokensAt(MinInt64) = %v", tok)
	}
	// A reservation whose time to act would pass MaxInt64 is refused:
	// 1 per 2^61 ns with a burst of 2, emptied near the end.
	l, _ = New(1, 1<<61, 2)
	late := int64(math.MaxInt64 - 1<<61 - 5)
	l.AllowAt(late)
	l.AllowAt(late)
	if res, _ := l.ReserveNAt(late, 2); res.OK {
		t.Fatalf("reservation past the end of time: %+v", res)
	}
	if res, _ := l.ReserveNAt(late, 1); res.OK {
		t.Fatalf("reservation whose TAT passes the end: %+v", res)
	}
}

func TestCancel(t *testing.T) {
	l, _ := New(1, time.Second, 2)
	l.AllowAt(0)
	l.AllowAt(0)
	before := l.state()
	res, err := l.ReserveNAt(0, 1)
	if err != nil || !res.OK || res.Wait != time.Second {
		t.Fatalf("ReserveAt = %+v, %v", res, err)
	}
	if l.AllowAt(int64(res.Wait - 1)) {
		t.Fatal("admitted before a reserved event's time to act")
	}
	if !res.CancelAt(0) || l.state() != before {
		t.Fatal("cancel did not restore the state exactly")
	}
	if res.CancelAt(0) {
		t.Fatal("cancelled twice")
	}
	// A reservation built on is not given back.
	res, _ = l.ReserveNAt(0, 1)
	res2, _ := l.ReserveNAt(0, 1)
	if res.CancelAt(0) {
		t.Fatal("cancelled a reservation another one was built on")
	}
	if !res2.CancelAt(0) {
		t.Fatal("the last reservation could not cancel")
	}
	// Nor after its time to act; at it, yes.
	res, _ = l.ReserveNAt(0, 1)
	if res.CancelAt(int64(res.Wait + 1)) {
		t.Fatal("cancelled after the time to act")
	}
	before = l.state()
	res, _ = l.ReserveNAt(0, 1)
	if !res.CancelAt(int64(res.Wait)) || l.state() != before {
		t.Fatal("a cancel at the time to act did not give the events back")
	}
	// Only the first call gives anything back, even when the state it
	// wrote is there again: an identical reservation made after it was
	// cancelled is not this one.
	res2, _ = l.ReserveNAt(0, 1)
	after := l.state()
	if res2.after != res.after {
		t.Fatal("the second reservation is not identical: the check below proves nothing")
	}
	if res.CancelAt(0) || l.state() != after {
		t.Fatal("a second cancel gave back another reservation's events")
	}
	var zero Reservation
	if zero.OK || zero.Cancel() || zero.CancelAt(0) {
		t.Fatal("the zero Reservation")
	}
	if res, err := l.ReserveNAt(0, 3); !errors.Is(err, limit.ErrCostExceedsBurst) || res.OK || res.Wait != limit.Never {
		t.Fatalf("ReserveAt(0, 3) = %+v, %v", res, err)
	}
	if res, err := l.ReserveNAt(0, -1); !errors.Is(err, limit.ErrNegativeCost) || res.OK || res.Wait != limit.Never {
		t.Fatalf("ReserveAt(0, -1) = %+v, %v", res, err)
	}
}

func TestWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, err := New(1, time.Second, 1, WithClock(nanotime.Since()))
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		for range 3 {
			if err := l.WaitN(context.Background(), 1); err != nil {
				t.Fatal(err)
			}
		}
		if d := time.Since(start); d != 2*time.Second {
			t.Fatalf("three events at 1/s took %v, want 2s", d)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second/2)
		defer cancel()
		if err := l.WaitN(ctx, 1); !errors.Is(err, ErrDeadline) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Wait past the deadline: %v", err)
		}
		if d := time.Since(start); d != 2*time.Second {
			t.Fatalf("Wait past the deadline blocked for %v", d-2*time.Second)
		}
		// A deadline exactly at the time to act is not sooner than the
		// wait: Wait blocks until then (and may see either the timer or
		// the deadline first).
		at := time.Since(start)
		ctx, cancel1 := context.WithTimeout(context.Background(), time.Second)
		defer cancel1()
		if err := l.WaitN(ctx, 1); err == ErrDeadline || err != nil && !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Wait with the deadline at the time to act: %v", err)
		}
		if d := time.Since(start) - at; d != time.Second {
			t.Fatalf("Wait with the deadline at the time to act returned after %v, want 1s", d)
		}
		start = start.Add(time.Second) // as if that event had not been
		ctx, cancel2 := context.WithCancel(context.Background())
		go func() { time.Sleep(time.Second / 4); cancel2() }()
		if err := l.WaitN(ctx, 1); !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled Wait: %v", err)
		}
		// Both cancelled reservations were given back: one event at 3s.
		time.Sleep(3*time.Second - time.Since(start))
		if !l.Allow() || l.Allow() {
			t.Fatal("want exactly one event at 3s")
		}
		if err := l.WaitN(context.Background(), 2); !errors.Is(err, limit.ErrCostExceedsBurst) {
			t.Fatalf("Wait(2): %v", err)
		}
		if err := l.WaitN(ctx, 1); !errors.Is(err, context.Canceled) {
			t.Fatalf("Wait on a done context: %v", err)
		}
	})
}

// TestRefund: a Refund right after the admission restores the state
// exactly; after another admission it gives nothing back.
func TestRefund(t *testing.T) {
	l, _ := New(1, time.Second, 3)
	before := l.state()
	r, rc, err := l.TakeAt(5, 2)
	if !r.OK || err != nil || rc.N != 2 || rc.At != 5 {
		t.Fatalf("TakeAt = %+v %+v %v", r, rc, err)
	}
	l.Refund(rc)
	if l.state() != before {
		t.Fatalf("state %d after refund, want %d", l.state(), before)
	}
	_, rc, _ = l.TakeAt(5, 2)
	l.AllowAt(5)
	after := l.state()
	l.Refund(rc)
	if l.state() != after {
		t.Fatal("a refund after another admission gave events back")
	}
	// Denials and n == 0 have the zero Receipt.
	if r, rc, _ := l.TakeAt(5, 1); r.OK || rc != (limit.Receipt{}) {
		t.Fatalf("denial: %+v %+v", r, rc)
	}
	if _, rc, _ := l.TakeAt(5, 0); rc != (limit.Receipt{}) {
		t.Fatalf("n == 0: %+v", rc)
	}
	l.Refund(limit.Receipt{})
	if l.state() != after {
		t.Fatal("the zero Receipt refunded")
	}
}

// TestRefundAfterLaterAdmission runs TestNaiveRefundBreaksBound's schedule
// through a Limiter: the refund comes after B, so it must give nothing back.
func TestRefundAfterLaterAdmission(t *testing.T) {
	l, _ := New(1, time.Second, 2)
	_, rc, _ := l.TakeAt(0, 1) // A
	var uses []bound.Use
	for i, now := range []int64{9e8, 9e8, 1e9} {
		if l.AllowAt(now) {
			uses = append(uses, bound.Use{At: now, Cost: 1})
		}
		if i == 0 {
			l.Refund(rc)
		}
	}
	if err := bound.Check(uses, 2, 1, uint64(time.Second)); err != nil {
		t.Fatal(err)
	}
}

// TestConcurrentRefund: goroutines take and refund at random on one
// limiter while others admit; the bound holds over the admissions not
// refunded.
func TestConcurrentRefund(t *testing.T) {
	l, _ := New(3, time.Microsecond, 4)
	var clock atomic.Int64
	const G = 6
	iters := 3000
	per := make([][]admitted, G)
	var wg sync.WaitGroup
	for g := range G {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 13))
			for range iters {
				now := clock.Add(rng.Int64N(100))
				n := 1 + rng.Int64N(2)
				r, rc, _ := l.TakeAt(now, n)
				if !r.OK {
					continue
				}
				if g%2 == 0 && rng.IntN(2) == 0 {
					l.Refund(rc)
					continue
				}
				per[g] = append(per[g], admitted{now, n})
			}
		})
	}
	wg.Wait()
	var all []admitted
	for _, p := range per {
		all = append(all, p...)
	}
	checkBound(t, all, 3, time.Microsecond, 4)
}

// TestConcurrentReserve: goroutines reserve (1 or 2 events, fractional T),
// cancel some at once, and admit, on one limiter; the bound holds over the
// admissions and the reservations not cancelled, counted at their time to
// act, and ReserveAt allocates nothing.
func TestConcurrentReserve(t *testing.T) {
	l, _ := New(3, time.Microsecond, 4)
	var clock atomic.Int64
	const G = 6
	iters := 3000
	per := make([][]admitted, G)
	var wg sync.WaitGroup
	for g := range G {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 17))
			for range iters {
				now := clock.Add(rng.Int64N(200))
				n := 1 + rng.Int64N(2)
				if g%3 == 0 {
					if r, _ := l.AllowNAt(now, n); r.OK {
						per[g] = append(per[g], admitted{now, n})
					}
					continue
				}
				res, err := l.ReserveNAt(now, n)
				if err != nil || !res.OK {
					t.Errorf("ReserveAt(%d, %d) = %+v, %v", now, n, res, err)
					return
				}
				if g%3 == 1 && rng.IntN(2) == 0 && res.CancelAt(now) {
					continue
				}
				per[g] = append(per[g], admitted{now + int64(res.Wait), n})
			}
		})
	}
	wg.Wait()
	var all []admitted
	for _, p := range per {
		all = append(all, p...)
	}
	checkBound(t, all, 3, time.Microsecond, 4)
	now := clock.Load()
	if a := testing.AllocsPerRun(1000, func() {
		now += 300
		l.ReserveNAt(now, 1)
	}); a != 0 {
		t.Fatalf("ReserveAt: %v allocs per run", a)
	}
}

// TestConcurrentReserveQueued: goroutines reserve 1 or 2 events at one
// instant, cancelling some at once; no reservation is lost or counted
// twice: the TAT moves by exactly the events kept.
func TestConcurrentReserveQueued(t *testing.T) {
	l, _ := New(3, time.Microsecond, 4)
	const now = 1 << 40
	for l.AllowAt(now) { // empty: every reservation from here waits and pushes the TAT
	}
	s0 := l.state()
	const G = 6
	iters := 20000
	if testing.Short() {
		iters = 3000
	}
	kept := make([]int64, G)
	var wg sync.WaitGroup
	for g := range G {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 19))
			for range iters {
				n := 1 + rng.Int64N(2)
				res, err := l.ReserveNAt(now, n)
				if err != nil || !res.OK || res.Wait <= 0 {
					t.Errorf("ReserveAt(%d, %d) = %+v, %v", int64(now), n, res, err)
					return
				}
				if g%2 == 0 && rng.IntN(2) == 0 && res.CancelAt(now) {
					continue
				}
				kept[g] += n
			}
		})
	}
	wg.Wait()
	var sum int64
	for _, k := range kept {
		sum += k
	}
	if got, want := uint64(l.state()-s0), uint64(sum)*l.ps.J; got != want {
		t.Fatalf("the TAT moved %d steps for %d events kept: %d steps", got, sum, want)
	}
}

func TestTokensRemaining(t *testing.T) {
	l, _ := New(2, time.Second, 4) // one event per 0.5 s
	if l.TokensAt(0) != 4 || l.RemainingAt(0) != 4 {
		t.Fatal("a new limiter is not full")
	}
	l.AllowNAt(0, 3)
	for _, c := range []struct {
		now  int64
		tok  float64
		left int64
	}{{0, 1, 1}, {25e7, 1.5, 1}, {5e8, 2, 2}, {2e9, 4, 4}, {-5e8, 0, 0}} {
		if got := l.TokensAt(c.now); math.Abs(got-c.tok) > 1e-9 {
			t.Errorf("TokensAt(%d) = %v, want %v", c.now, got, c.tok)
		}
		if got := l.RemainingAt(c.now); got != c.left {
			t.Errorf("RemainingAt(%d) = %d, want %d", c.now, got, c.left)
		}
	}
	l.ReserveNAt(0, 3) // into debt
	if got := l.TokensAt(0); math.Abs(got+2) > 1e-9 || l.RemainingAt(0) != 0 {
		t.Errorf("in debt: TokensAt %v RemainingAt %d", got, l.RemainingAt(0))
	}
}

func TestWithClock(t *testing.T) {
	now := int64(0)
	l, err := New(1, time.Second, 1, WithClock(func() int64 { return now }))
	if err != nil {
		t.Fatal(err)
	}
	if !l.Allow() || l.Allow() {
		t.Fatal("want one event at 0")
	}
	if r, _ := l.AllowN(1); r.RetryAfter != time.Second {
		t.Fatalf("AllowN: %+v", r)
	}
	now = int64(time.Second)
	if l.Remaining() != 1 || l.Tokens() != 1 || !l.Allow() {
		t.Fatal("the clock was not read")
	}
	if res, _ := l.ReserveN(1); res.Wait != time.Second || !res.Cancel() {
		t.Fatalf("Reserve: %+v", res)
	}
	// The default clock is nanotime.Now.
	d, _ := New(1, time.Hour, 1)
	if !d.Allow() || d.Allow() {
		t.Fatal("default clock")
	}
}
