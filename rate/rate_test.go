package rate_test

// x/time/rate's own scenarios (rate_test.go of golang.org/x/time v0.15.0),
// written again for this package. Where the outcome differs on purpose the
// scenario is in diff_test.go instead, with x/time/rate's outcome beside ours.

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cellrate/cellrate/rate"
)

const d = 100 * time.Millisecond

var t0 = time.Now()

// at returns t0 + k*d.
func at(k int) time.Time { return t0.Add(time.Duration(k) * d) }

func TestEvery(t *testing.T) {
	for _, c := range []struct {
		in   time.Duration
		want rate.Limit
	}{
		{0, rate.Inf},
		{-5 * time.Second, rate.Inf},
		{time.Nanosecond, 1e9},
		{time.Millisecond, 1e3},
		{250 * time.Millisecond, 4},
		{time.Second, 1},
		{4 * time.Second, 0.25},
		{time.Duration(math.MaxInt64), rate.Limit(1e9 / float64(math.MaxInt64))},
	} {
		if got := rate.Every(c.in); math.Abs(float64(got/c.want)-1) > 1e-12 {
			t.Errorf("Every(%v) = %v, want %v", c.in, got, c.want)
		}
	}
	if rate.Limit(10) == rate.Inf {
		t.Error("Limit(10) == Inf")
	}
}

// allow is one AllowN call and what TokensAt says just before it.
type allow struct {
	k    int // at(k)
	toks float64
	n    int
	ok   bool
}

func runAllows(t *testing.T, l *rate.Limiter, steps []allow) {
	t.Helper()
	for i, s := range steps {
		if toks := l.TokensAt(at(s.k)); toks != s.toks {
			t.Errorf("step %d: TokensAt(t%d) = %v, want %v", i, s.k, toks, s.toks)
		}
		if ok := l.AllowN(at(s.k), s.n); ok != s.ok {
			t.Errorf("step %d: AllowN(t%d, %d) = %v, want %v", i, s.k, s.n, ok, s.ok)
		}
	}
}

func TestBurst1(t *testing.T) {
	runAllows(t, rate.NewLimiter(10, 1), []allow{
		{0, 1, 1, true},
		{0, 0, 1, false},
		{0, 0, 1, false},
		{1, 1, 1, true},
		{1, 0, 1, false},
		{1, 0, 1, false},
		{2, 1, 2, false}, // more than the burst: never
		{2, 1, 1, true},
		{2, 0, 1, false},
	})
}

func TestBurst3(t *testing.T) {
	runAllows(t, rate.NewLimiter(10, 3), []allow{
		{0, 3, 2, true},
		{0, 1, 2, false},
		{0, 1, 1, true},
		{0, 0, 1, false},
		{1, 1, 4, false},
		{2, 2, 1, true},
		{3, 2, 1, true},
		{4, 2, 1, true},
		{4, 1, 1, true},
		{4, 0, 1, false},
		{4, 0, 1, false},
		{9, 3, 3, true},
		{9, 0, 0, true},
	})
}

// A float rate whose period in ns is not a whole number (10/13 per second)
// still admits the first token.
func TestNoTruncation(t *testing.T) {
	if !rate.NewLimiter(0.7692307692307693, 1).Allow() {
		t.Fatal("the first token was refused")
	}
}

func TestSimultaneousRequests(t *testing.T) {
	const burst, calls = 5, 15
	l := rate.NewLimiter(1, burst)
	var ok atomic.Int32
	var wg sync.WaitGroup
	for range calls {
		wg.Go(func() {
			if l.Allow() {
				ok.Add(1)
			}
		})
	}
	wg.Wait()
	if ok.Load() != burst {
		t.Errorf("%d admitted, want %d", ok.Load(), burst)
	}
}

// Offered 500/s for 5s at 100/s with burst 100: exactly burst + rate*t.
func TestLongRunningQPS(t *testing.T) {
	l := rate.NewLimiter(100, 100)
	n := 0
	end := t0.Add(5 * time.Second)
	for now := t0; !now.After(end); now = now.Add(2 * time.Millisecond) {
		if l.AllowN(now, 1) {
			n++
		}
	}
	if want := 100 + 100*5; n != want {
		t.Errorf("%d admitted, want %d", n, want)
	}
}

// request is a ReserveN(at(k), n) and the time to act it must return (a
// multiple of d, exactly), or !ok.
type request struct {
	k, n int
	act  int
	ok   bool
}

func reserve(t *testing.T, l *rate.Limiter, q request) *rate.Reservation {
	t.Helper()
	r := l.ReserveN(at(q.k), q.n)
	if r.OK() != q.ok {
		t.Fatalf("ReserveN(t%d, %d).OK() = %v, want %v", q.k, q.n, r.OK(), q.ok)
	}
	if q.ok {
		if got, want := r.DelayFrom(at(q.k)), at(q.act).Sub(at(q.k)); got != want {
			t.Errorf("ReserveN(t%d, %d) delay %v, want %v (t%d)", q.k, q.n, got, want, q.act)
		}
	} else if r.DelayFrom(at(q.k)) != rate.InfDuration {
		t.Errorf("ReserveN(t%d, %d) not OK with delay %v", q.k, q.n, r.DelayFrom(at(q.k)))
	}
	return r
}

func TestSimpleReserve(t *testing.T) {
	l := rate.NewLimiter(10, 2)
	reserve(t, l, request{0, 2, 0, true})
	reserve(t, l, request{0, 2, 2, true})
	reserve(t, l, request{3, 2, 4, true})
}

func TestMix(t *testing.T) {
	l := rate.NewLimiter(10, 2)
	reserve(t, l, request{0, 3, 0, false}) // more than the burst
	reserve(t, l, request{0, 2, 0, true})
	runAllows(t, l, []allow{{1, 1, 2, false}})
	reserve(t, l, request{1, 2, 2, true})
	runAllows(t, l, []allow{{1, -1, 1, false}}) // in debt
	runAllows(t, l, []allow{{3, 1, 1, true}})
}

func TestCancelInvalid(t *testing.T) {
	l := rate.NewLimiter(10, 2)
	reserve(t, l, request{0, 2, 0, true})
	r := reserve(t, l, request{0, 3, 0, false})
	r.CancelAt(at(0)) // nothing to give back
	reserve(t, l, request{0, 2, 2, true})
}

func TestCancelLast(t *testing.T) {
	l := rate.NewLimiter(10, 2)
	reserve(t, l, request{0, 2, 0, true})
	r := reserve(t, l, request{0, 2, 2, true})
	r.CancelAt(at(1)) // both back
	reserve(t, l, request{1, 2, 2, true})
}

func TestCancelTooLate(t *testing.T) {
	l := rate.NewLimiter(10, 2)
	reserve(t, l, request{0, 2, 0, true})
	r := reserve(t, l, request{0, 2, 2, true})
	r.CancelAt(at(3)) // after the time to act: nothing back
	reserve(t, l, request{3, 2, 4, true})
}

func TestCancel0Tokens(t *testing.T) {
	l := rate.NewLimiter(10, 2)
	reserve(t, l, request{0, 2, 0, true})
	r := reserve(t, l, request{0, 1, 1, true})
	reserve(t, l, request{0, 1, 2, true})
	r.CancelAt(at(0)) // a later reservation waits for its token: nothing back
	reserve(t, l, request{0, 1, 3, true})
}

func TestCancelTwice(t *testing.T) {
	l := rate.NewLimiter(10, 2)
	reserve(t, l, request{0, 2, 0, true})
	r := reserve(t, l, request{0, 1, 1, true})
	r.CancelAt(at(0))
	r.CancelAt(at(0)) // only the first gives back
	reserve(t, l, request{0, 2, 2, true})
}

func TestReserveSetLimit(t *testing.T) {
	l := rate.NewLimiter(5, 2)
	reserve(t, l, request{0, 2, 0, true})
	reserve(t, l, request{0, 2, 4, true})
	l.SetLimitAt(at(2), 10) // one token owed at t2, repaid at 10/s from there
	reserve(t, l, request{2, 1, 4, true})
}

func TestReserveMaxByDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := rate.NewLimiter(10, 2)
		ctx, cancel := context.WithTimeout(context.Background(), d*3/2)
		defer cancel()
		for i, want := range []bool{true, true, true, false} { // 2 now, 1 at d, then one at 2d, past the deadline
			start := time.Now()
			err := l.WaitN(ctx, 1)
			if (err == nil) != want {
				t.Fatalf("wait %d: %v, want ok %v", i, err, want)
			}
			if i == 2 && time.Since(start) != d {
				t.Errorf("wait %d took %v, want %v", i, time.Since(start), d)
			}
		}
	})
}

// wait runs WaitN(ctx, n) and checks its error and how long it blocked.
func wait(t *testing.T, l *rate.Limiter, ctx context.Context, n int, delay time.Duration, ok bool) {
	t.Helper()
	start := time.Now()
	err := l.WaitN(ctx, n)
	if (err == nil) != ok || time.Since(start) != delay {
		t.Errorf("WaitN(%d) = %v after %v, want ok %v after %v", n, err, time.Since(start), ok, delay)
	}
}

func TestWaitSimple(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := rate.NewLimiter(10, 3)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		wait(t, l, ctx, 1, 0, false)                   // already cancelled
		wait(t, l, context.Background(), 4, 0, false)  // more than the burst
		wait(t, l, context.Background(), 2, 0, true)   // now
		wait(t, l, context.Background(), 3, 2*d, true) // 2 owed: 2d
		wait(t, l, context.Background(), 0, 0, true)   // nothing owed
		wait(t, l, context.Background(), -1, 0, false) // negative
		wait(t, l, context.Background(), 1, 1*d, true) // one more
		wait(t, l, context.Background(), 3, 3*d, true) // three more
		wait(t, l, context.Background(), 0, 0, true)   // still nothing owed
		wait(t, l, context.Background(), 2, 2*d, true) // two more
		wait(t, l, context.Background(), 1, 1*d, true) // and one
		wait(t, l, context.Background(), 1, 1*d, true) // and one
		wait(t, l, context.Background(), 0, 0, true)   // and n = 0 at once
	})
}

func TestWaitCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := rate.NewLimiter(10, 3)
		ctx, cancel := context.WithCancel(context.Background())
		wait(t, l, ctx, 2, 0, true) // one token left
		time.AfterFunc(d, cancel)
		wait(t, l, ctx, 3, d, false) // cancelled at d: its 3 tokens back
		// At d: the token left, one refilled.
		wait(t, l, context.Background(), 2, 0, true)
	})
}

func TestWaitTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := rate.NewLimiter(10, 3)
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		wait(t, l, ctx, 2, 0, true)
		wait(t, l, ctx, 3, 0, false) // 2d > d: fails at once
		wait(t, l, ctx, 1, 0, true)  // and took nothing
	})
}

func TestWaitInf(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		wait(t, rate.NewLimiter(rate.Inf, 0), context.Background(), 3, 0, true)
	})
}

func TestZeroLimit(t *testing.T) {
	l := rate.NewLimiter(0, 1)
	if !l.Allow() {
		t.Error("the first token was refused")
	}
	if l.Allow() {
		t.Error("a second token was admitted at limit 0")
	}
}

func TestSetAfterZeroLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := rate.NewLimiter(0, 1)
		if !l.Allow() || l.Allow() {
			t.Fatal("limit 0, burst 1: want one admission")
		}
		l.SetLimit(10)
		wait(t, l, context.Background(), 1, d, true) // refilled from SetLimit on
	})
}

// A limit so small that one token takes centuries never refills.
func TestTinyLimit(t *testing.T) {
	l := rate.NewLimiter(1e-10, 1)
	if !l.Allow() || l.Allow() {
		t.Error("limit 1e-10, burst 1: want one admission")
	}
	if !l.AllowN(time.Now().Add(100*365*24*time.Hour), 0) || l.AllowN(time.Now().Add(100*365*24*time.Hour), 1) {
		t.Error("limit 1e-10 refilled a token in a century")
	}
}

func TestZeroValue(t *testing.T) {
	var l rate.Limiter
	if l.Allow() || l.Limit() != 0 || l.Burst() != 0 || l.Tokens() != 0 {
		t.Errorf("zero Limiter: Allow true or Limit %v Burst %d Tokens %v", l.Limit(), l.Burst(), l.Tokens())
	}
	if !l.AllowN(time.Now(), 0) || !l.ReserveN(time.Now(), 0).OK() || l.ReserveN(time.Now(), 1).OK() {
		t.Error("zero Limiter: n = 0 must be admitted, n = 1 not")
	}
	l.SetBurst(2)
	l.SetLimit(10)
	// Burst raised from 0 at limit 0, then limit 10: empty, refilling.
	now := time.Now()
	if l.AllowN(now, 1) || !l.AllowN(now.Add(d+time.Millisecond), 1) {
		t.Error("zero Limiter given limit 10 and burst 2: want empty, refilling at 10/s")
	}
	var r rate.Reservation
	if r.OK() || r.Delay() != rate.InfDuration {
		t.Error("zero Reservation is OK or has a delay")
	}
	r.Cancel()
}

func TestLimitAndBurst(t *testing.T) {
	l := rate.NewLimiter(rate.Every(3*time.Millisecond), 7)
	if l.Limit() != rate.Every(3*time.Millisecond) || l.Burst() != 7 {
		t.Errorf("Limit %v Burst %d", l.Limit(), l.Burst())
	}
	l.SetLimit(rate.Inf)
	l.SetBurst(9)
	if l.Limit() != rate.Inf || l.Burst() != 9 || l.Tokens() != 9 {
		t.Errorf("Limit %v Burst %d Tokens %v", l.Limit(), l.Burst(), l.Tokens())
	}
}

func TestTokensAtEvery(t *testing.T) {
	// Every(3ms) is read as exactly 1000/3 per second.
	l := rate.NewLimiter(rate.Every(3*time.Millisecond), 1)
	l.AllowN(t0, 1)
	for _, c := range []struct {
		after time.Duration
		ok    bool
	}{{3*time.Millisecond - 1, false}, {3 * time.Millisecond, true}, {6*time.Millisecond - 1, false}, {6 * time.Millisecond, true}} {
		if ok := l.AllowN(t0.Add(c.after), 1); ok != c.ok {
			t.Errorf("AllowN(t0+%v) = %v, want %v", c.after, ok, c.ok)
		}
	}
}

// Every(interval) is read back as exactly one token per interval, for any
// interval below 2^53 ns (beyond, several intervals share a float).
func TestEveryExact(t *testing.T) {
	for _, every := range []time.Duration{1, 7, 999, 333333333, 4294967295, 7 * time.Second, 90 * time.Minute, 49 * 24 * time.Hour, 12345678 * time.Millisecond, 12345678901, 1<<53 - 1} {
		l := rate.NewLimiter(rate.Every(every), 1)
		l.AllowN(t0, 1)
		for k := time.Duration(1); k <= 3; k++ {
			if l.AllowN(t0.Add(k*every-1), 1) || !l.AllowN(t0.Add(k*every), 1) {
				t.Errorf("Every(%v): token %d not exactly at %v", every, k, k*every)
			}
		}
	}
}
