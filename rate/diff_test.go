package rate_test

// Each place this package differs from golang.org/x/time/rate on purpose
// (the package doc's list), with x/time/rate's outcome (v0.15.0, read from
// its source) in a comment beside ours.

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cellrate/cellrate/rate"
)

// Stale times are charged, not refilled. x/time/rate, back at t0 after t1,
// takes t0 as its last time and admits 2 more tokens there, then refills
// t0..t1 again: 3 tokens in [t0, t1] with burst 3 and 1 refilled, plus the
// refill counted twice.
func TestDiffJumpBackwards(t *testing.T) {
	runAllows(t, rate.NewLimiter(10, 3), []allow{
		{1, 3, 1, true},  // start at t1
		{0, 1, 1, true},  // x/time/rate: toks 2 (t0's refill is not yet in)
		{0, 0, 1, false}, // x/time/rate: toks 1, admitted
		{0, 0, 1, false},
		{1, 1, 1, true}, // x/time/rate: the same
		{1, 0, 1, false},
		{2, 1, 1, true},
		{2, 0, 1, false},
	})
}

func TestDiffReserveJumpBack(t *testing.T) {
	l := rate.NewLimiter(10, 2)
	reserve(t, l, request{1, 2, 1, true})
	reserve(t, l, request{0, 1, 2, true}) // at t0 the bucket owed t0..t1's refill: x/time/rate acts at t1
	reserve(t, l, request{2, 2, 4, true}) // x/time/rate: t3
	reserve(t, l, request{0, 3, 0, false})
	reserve(t, l, request{2, 1, 5, true}) // x/time/rate: t4
	reserve(t, l, request{2, 1, 6, true}) // x/time/rate: t5
}

func TestDiffReserveSetBurst(t *testing.T) {
	l := rate.NewLimiter(5, 2)
	reserve(t, l, request{0, 2, 0, true})
	reserve(t, l, request{0, 2, 4, true})
	l.SetBurstAt(at(3), 4) // -0.5 tokens at t3
	// At t0, stale: -2 (t0..t3's refill owed); 4 more are 6 tokens away at
	// 5/s. x/time/rate takes t0 as now with its t3 tokens: -4.5, acts at t9.
	reserve(t, l, request{0, 4, 12, true})
}

// Cancels after the bucket moved give nothing back.
func TestDiffCancel1Token(t *testing.T) {
	l := rate.NewLimiter(10, 2)
	reserve(t, l, request{0, 2, 0, true})
	r := reserve(t, l, request{0, 2, 2, true})
	reserve(t, l, request{0, 1, 3, true})
	r.CancelAt(at(2))                     // x/time/rate: 1 token back (2 less the 1 reserved after)
	reserve(t, l, request{2, 2, 5, true}) // x/time/rate: t4
}

func TestDiffCancelMulti(t *testing.T) {
	l := rate.NewLimiter(10, 4)
	reserve(t, l, request{0, 4, 0, true})
	a := reserve(t, l, request{0, 3, 3, true})
	reserve(t, l, request{0, 1, 4, true})
	c := reserve(t, l, request{0, 1, 5, true})
	c.CancelAt(at(1))                     // the last one: back, as in x/time/rate
	a.CancelAt(at(1))                     // x/time/rate: 2 back, as if c had never been; here nothing
	reserve(t, l, request{1, 3, 7, true}) // x/time/rate: t5
}

func TestDiffReserveJumpBackCancel(t *testing.T) {
	l := rate.NewLimiter(10, 2)
	reserve(t, l, request{1, 2, 1, true})
	r := reserve(t, l, request{1, 2, 3, true})
	reserve(t, l, request{1, 1, 4, true})
	r.CancelAt(at(0))                     // x/time/rate: 1 back; here nothing (the bucket moved)
	reserve(t, l, request{1, 2, 6, true}) // x/time/rate: t4
}

func TestDiffSetLimitCancel(t *testing.T) {
	l := rate.NewLimiter(5, 2)
	reserve(t, l, request{0, 2, 0, true})
	r := reserve(t, l, request{0, 2, 4, true})
	l.SetLimitAt(at(2), 10)
	r.CancelAt(at(2))                     // x/time/rate: 2 back; here nothing after a SetLimit
	reserve(t, l, request{2, 2, 5, true}) // -1 at t2, 3 tokens at 10/s; x/time/rate: t3
}

// A zero limit refuses a reservation it can never serve, and takes nothing.
func TestDiffZeroLimitReserve(t *testing.T) {
	l := rate.NewLimiter(0, 2)
	if !l.ReserveN(at(0), 2).OK() {
		t.Fatal("the burst was refused")
	}
	r := l.ReserveN(at(0), 1) // x/time/rate: OK, Delay InfDuration, one token owed
	if r.OK() || r.DelayFrom(at(0)) != rate.InfDuration {
		t.Fatalf("limit 0, empty: reservation OK %v delay %v", r.OK(), r.DelayFrom(at(0)))
	}
	l.SetLimitAt(at(1), 10)
	if !l.AllowN(at(2), 1) { // x/time/rate: refused, repaying the token the reservation owes
		t.Error("a refused reservation was charged")
	}
}

// Cancels at a zero limit give back to the whole tokens.
func TestDiffZeroLimitCancel(t *testing.T) {
	l := rate.NewLimiter(0, 2)
	r := l.ReserveN(at(0), 2)
	l.ReserveN(at(0), 0)
	r.CancelAt(at(0))
	if !l.AllowN(at(5), 2) || l.AllowN(at(5), 1) {
		t.Error("cancel at limit 0 did not give back exactly 2")
	}
}

// WaitN at a zero limit waits for the limit to be raised. x/time/rate's
// reserves with an infinite delay and wakes only when ctx is done.
func TestDiffZeroLimitWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := rate.NewLimiter(0, 1)
		l.Allow()
		done := make(chan time.Duration)
		start := time.Now()
		go func() {
			if err := l.Wait(context.Background()); err != nil {
				t.Error(err)
			}
			done <- time.Since(start)
		}()
		time.Sleep(time.Hour)
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("Wait returned at limit 0")
		default:
		}
		l.SetLimit(10) // empty at 1h, a token at 1h+d
		if got := <-done; got != time.Hour+d {
			t.Errorf("Wait returned after %v, want %v", got, time.Hour+d)
		}
		// With a deadline it fails at once, as x/time/rate's does.
		l.SetLimit(0)
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		defer cancel()
		wait(t, l, ctx, 1, 0, false)
		// Cancelled while waiting: ctx's error.
		ctx2, cancel2 := context.WithCancel(context.Background())
		time.AfterFunc(time.Minute, cancel2)
		wait(t, l, ctx2, 1, time.Minute, false)
	})
}

// Tokens carry over a zero limit exactly: whole tokens, the fraction and
// the debt.
func TestDiffZeroLimitCarries(t *testing.T) {
	l := rate.NewLimiter(10, 3)
	l.AllowN(at(0), 3)
	l.SetLimitAt(t0.Add(d*5/2), 0) // 2.5 tokens: 2 whole ones, half a token paused
	if got := l.TokensAt(at(100)); got != 2.5 {
		t.Errorf("TokensAt at limit 0 = %v, want 2.5", got)
	}
	if !l.AllowN(at(50), 2) || l.AllowN(at(60), 1) {
		t.Fatal("limit 0: want exactly the 2 whole tokens")
	}
	l.SetLimitAt(at(100), 10) // the half token back, refilling from t100
	if l.AllowN(t0.Add(100*d+d/2-1), 1) || !l.AllowN(t0.Add(100*d+d/2), 1) {
		t.Error("the half token was not carried over the zero limit")
	}
	// Debt: 2 owed at t200, then 0 for a while, then 10/s again.
	l.AllowN(at(200), 3)
	l.ReserveN(at(200), 2)
	l.SetLimitAt(at(200), 0)
	if l.AllowN(at(300), 0) || l.TokensAt(at(300)) != -2 {
		t.Errorf("in debt at limit 0: AllowN(0) admitted or Tokens %v", l.TokensAt(at(300)))
	}
	l.SetLimitAt(at(300), 10)
	if l.AllowN(t0.Add(302*d), 1) || !l.AllowN(at(303), 1) {
		t.Error("the debt was not carried over the zero limit")
	}
}

// Leaving Inf the bucket is full; n > burst and any n >= 0 pass under Inf,
// a negative n does not (x/time/rate admits it).
func TestDiffInf(t *testing.T) {
	l := rate.NewLimiter(rate.Inf, 1)
	if !l.AllowN(at(0), 1000) || !l.AllowN(at(0), 0) || l.AllowN(at(0), -1) {
		t.Error("Inf: want every n >= 0 admitted and no n < 0")
	}
	r := l.ReserveN(at(0), 5)
	if !r.OK() || r.DelayFrom(at(0)) != 0 {
		t.Error("Inf: reservation not OK at once")
	}
	l.SetLimitAt(at(1), 10)
	l.SetBurstAt(at(1), 3)
	if !l.AllowN(at(1), 1) {
		t.Error("leaving Inf: bucket not full")
	}
	if !l.AllowN(at(1), 0) {
		t.Error("n = 0 refused")
	}
	l.SetLimitAt(at(2), rate.Inf)
	l.SetLimitAt(at(2), 0) // from Inf to 0: a full pool
	if !l.AllowN(at(3), 3) || l.AllowN(at(3), 1) {
		t.Error("from Inf to limit 0: want exactly a full burst")
	}
}

// Burst 0 admits only n = 0; raising it starts empty, forgetting debt.
func TestDiffBurstZero(t *testing.T) {
	l := rate.NewLimiter(10, 0)
	if !l.AllowN(at(0), 0) || l.AllowN(at(0), 1) || l.ReserveN(at(0), 1).OK() || !l.ReserveN(at(0), 0).OK() {
		t.Fatal("burst 0: want n = 0 only")
	}
	l.SetBurstAt(at(1), 2)
	if l.AllowN(at(1), 1) || !l.AllowN(at(2), 1) || l.AllowN(at(2), 1) {
		t.Error("burst raised from 0: want empty at that time, refilling")
	}
	l.ReserveN(at(2), 2) // 2 owed: x/time/rate carries them over a burst of 0
	l.SetBurstAt(at(2), 0)
	l.SetBurstAt(at(2), 2)
	if !l.AllowN(at(3), 1) {
		t.Error("raising the burst from 0 kept the debt")
	}
}

// n < 0 is never admitted: x/time/rate's AllowN(t, -n) is true and adds n
// tokens.
func TestDiffNegative(t *testing.T) {
	l := rate.NewLimiter(10, 2)
	l.AllowN(at(0), 2)
	if l.AllowN(at(0), -2) || l.ReserveN(at(0), -2).OK() || l.AllowN(at(0), 1) {
		t.Error("a negative n was admitted or gave tokens")
	}
	if err := l.WaitN(context.Background(), -1); err == nil {
		t.Error("WaitN(-1) = nil")
	}
	for _, r := range []rate.Limit{0, rate.Inf} {
		l := rate.NewLimiter(r, 2)
		if l.AllowN(at(0), -1) || l.ReserveN(at(0), -1).OK() {
			t.Errorf("limit %v: a negative n was admitted", r)
		}
	}
}

// A burst the bucket cannot hold at the limit is clamped for the bucket;
// Burst reports the burst given.
func TestDiffBurstClamped(t *testing.T) {
	// One a day: a token is 8.64e13 units, so 2^61 units hold 26687 tokens.
	const fits = 1<<61/86_400_000_000_000 - 0
	l := rate.NewLimiter(rate.Every(24*time.Hour), 1_000_000)
	if l.Burst() != 1_000_000 {
		t.Errorf("Burst() = %d", l.Burst())
	}
	if l.AllowN(at(0), fits+1) || !l.AllowN(at(0), fits) || l.AllowN(at(0), 1) {
		t.Errorf("want exactly %d admitted", fits)
	}
	if err := l.WaitN(context.Background(), fits+1); err == nil {
		t.Error("WaitN beyond the clamped burst: nil")
	}
}

// The wait is rounded up, so a reservation never acts early: at 3/s a
// token is 333333333.33ns, x/time/rate truncates to ...333.
func TestDiffWaitRoundsUp(t *testing.T) {
	l := rate.NewLimiter(3, 1)
	l.AllowN(at(0), 1)
	if got := l.ReserveN(at(0), 1).DelayFrom(at(0)); got != 333333334 {
		t.Errorf("delay %d, want 333333334", got)
	}
	// The next one: 2/3 s is 666666666.67ns, and the refill in the
	// fraction of a ns the first rounded up was spent on it (bucket's
	// rule), so 666666668.
	if got := l.ReserveN(at(0), 1).DelayFrom(at(0)); got != 666666668 {
		t.Errorf("delay %d, want 666666668", got)
	}
}

// SetLimitAt at a time not after the bucket's last refill takes effect 1ns
// after it, with no refill for that ns.
func TestDiffSetLimitStale(t *testing.T) {
	l := rate.NewLimiter(1e9, 2) // one token per ns
	l.AllowN(at(1), 2)
	l.SetLimitAt(at(0), 1e9)                                     // same limit: nothing changes
	l.SetLimitAt(at(0), 5e8)                                     // stale: from t1+1ns on, one token per 2ns
	if l.AllowN(at(1).Add(2), 1) || !l.AllowN(at(1).Add(3), 1) { // x/time/rate: 2 at t1+2ns
		t.Error("a stale SetLimitAt refilled the ns after the last refill")
	}
}

// The whole tokens left at a zero limit go back into the bucket when the
// limit is raised, beside the paused fraction.
func TestDiffZeroLimitGivesBack(t *testing.T) {
	l := rate.NewLimiter(10, 3)
	l.AllowN(at(0), 3)
	l.SetLimitAt(t0.Add(d*5/2), 0) // 2 whole tokens and a half
	l.AllowN(at(50), 1)
	l.SetLimitAt(at(100), 10) // 1.5 at t100
	if !l.AllowN(at(100), 1) || l.AllowN(at(100), 1) || l.AllowN(t0.Add(100*d+d/2-1), 1) || !l.AllowN(t0.Add(100*d+d/2), 1) {
		t.Error("want 1.5 tokens at t100")
	}
}
