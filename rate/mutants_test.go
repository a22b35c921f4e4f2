package rate_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cellrate/cellrate/rate"
)

// A cost of 0 takes nothing and is always granted: WaitN(ctx, 0) returns nil
// and ReserveN(t, 0) is OK, at every kind of limit.
func TestCostZero(t *testing.T) {
	for _, r := range []rate.Limit{1, 0, rate.Inf} {
		l := rate.NewLimiter(r, 1)
		l.AllowN(time.Now(), 1)
		if err := l.WaitN(context.Background(), 0); err != nil {
			t.Errorf("limit %v: WaitN(0) = %v", r, err)
		}
		if res := l.ReserveN(time.Now(), 0); !res.OK() {
			t.Errorf("limit %v: ReserveN(0) is not OK", r)
		}
	}
}

// A deadline exactly at the slot is not before it: WaitN sleeps until the
// slot instead of giving up at once.
func TestWaitDeadlineAtTheSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := rate.NewLimiter(1, 1)
		l.AllowN(time.Now(), 1)
		start := time.Now()
		ctx, cancel := context.WithDeadline(context.Background(), start.Add(time.Second))
		defer cancel()
		err := l.WaitN(ctx, 1)
		if el := time.Since(start); el != time.Second || (err != nil && !errors.Is(err, context.DeadlineExceeded)) {
			t.Errorf("WaitN returned %v after %v, want nil or the deadline after 1s", err, el)
		}
	})
}

// When the bucket's debt would pass its end-of-time bound, ReserveN refuses
// (not OK, nothing taken) and WaitN says why; a cost above the clamped burst
// says that instead.
func TestReserveDebtBound(t *testing.T) {
	// One a day: a token is 8.64e13 units, so 2^61 units hold 26687 tokens.
	const fits = 1 << 61 / 86_400_000_000_000
	l := rate.NewLimiter(rate.Every(24*time.Hour), 1_000_000)
	i := 0
	for ; i < 10 && l.ReserveN(at(0), fits).OK(); i++ {
	}
	if i == 10 {
		t.Fatal("10 reservations of the clamped burst at once were all OK")
	}
	if r := l.ReserveN(at(0), fits); r.OK() || r.DelayFrom(at(0)) != rate.InfDuration {
		t.Errorf("a reservation past the debt bound: OK %v, delay %v", r.OK(), r.DelayFrom(at(0)))
	}
	err := l.WaitN(context.Background(), fits)
	if err == nil || !strings.Contains(err.Error(), "debt limit") {
		t.Errorf("WaitN(%d) past the debt bound: %v, want the debt limit's error", fits, err)
	}
	err = l.WaitN(context.Background(), fits+1)
	if err == nil || !strings.Contains(err.Error(), "the bucket holds") {
		t.Errorf("WaitN(%d) beyond the clamped burst: %v, want the clamped burst's error", fits+1, err)
	}
}

// Interval: a call exactly Interval after f last ran runs it.
func TestSometimesIntervalBoundary(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &rate.Sometimes{Interval: time.Second}
		got := calls(s, 7, 500*time.Millisecond)
		if want := []int{0, 2, 4, 6}; !equalInts(got, want) {
			t.Errorf("ran %v, want %v", got, want)
		}
	})
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A limit whose bucket holds exactly one token (one per 2^61 ns) is that
// bucket, burst clamped to 1, not a zero limit: one admission, then none.
func TestBurstClampedToOne(t *testing.T) {
	l := rate.NewLimiter(rate.Every(1<<61), 2)
	if !l.AllowN(at(0), 1) || l.AllowN(at(0), 1) {
		t.Error("want exactly 1 admitted at a bucket of burst 1")
	}
	if l.AllowN(at(1), 2) {
		t.Error("a cost of 2 admitted by a bucket that holds 1")
	}
}

// At 2^62 tokens per second and above, the bucket refills whole tokens per
// ns: 4611686018 per ns at 2^62, so a burst of 2^33 takes 2 ns to refill.
func TestHugeLimits(t *testing.T) {
	if strconv.IntSize == 64 {
		shift := 33 // not a constant: the test compiles where int has 32 bits
		b := 1 << shift
		l := rate.NewLimiter(rate.Limit(0x1p62), b)
		if !l.AllowN(at(0), b) || l.AllowN(at(0).Add(1), b) || !l.AllowN(at(0).Add(3), b) {
			t.Error("limit 2^62: want a burst of 2^33 refilled in 2ns, not 1")
		}
	}
	// r/1e9 at 2^63 and above: MaxInt64 tokens per ns.
	for _, r := range []rate.Limit{0x1p63 * 1e9, 0x1p64 * 1e9} {
		l := rate.NewLimiter(r, 3)
		if !l.AllowN(at(0), 3) || !l.AllowN(at(0).Add(1), 3) {
			t.Errorf("limit %v: the bucket did not refill in 1ns", r)
		}
	}
}

// Tokens never grow at a zero limit: lowering the burst to the whole tokens
// held drops the paused fraction, so raising it again finds just those.
func TestZeroLimitBurstDownAndUp(t *testing.T) {
	l := rate.NewLimiter(10, 5)
	l.AllowN(at(0), 5)
	l.SetLimitAt(t0.Add(d*35/10), 0) // 3.5 tokens: 3 whole and a half
	l.SetBurstAt(at(40), 3)
	l.SetBurstAt(at(41), 5)
	if got := l.TokensAt(at(42)); got != 3 {
		t.Errorf("TokensAt = %v, want 3", got)
	}
	l.SetLimitAt(at(50), 10)
	if !l.AllowN(at(50), 3) || l.AllowN(t0.Add(50*d+d-1), 1) || !l.AllowN(at(51), 1) {
		t.Error("want 3 tokens back at the raise, then the refill")
	}
}

// A zero limit's pool with no paused bucket goes into a new bucket whole:
// a full bucket less what the pool no longer holds.
func TestZeroLimitPoolIntoBucket(t *testing.T) {
	l := rate.NewLimiter(0, 5)
	if !l.AllowN(at(0), 2) {
		t.Fatal("a full pool denied 2")
	}
	l.SetLimitAt(at(1), 10)
	if got := l.TokensAt(at(1)); got != 3 {
		t.Errorf("TokensAt = %v, want 3", got)
	}
	if !l.AllowN(at(1), 3) || l.AllowN(at(1), 1) {
		t.Error("want exactly 3 tokens after raising the limit")
	}
}

// An Interval set after the first call counts from the last run at an
// Interval, and there was none: the next call runs f, as in x/time/rate.
func TestSometimesIntervalSetLater(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &rate.Sometimes{}
		ran := 0
		s.Do(func() { ran++ })
		s.Interval = time.Hour
		s.Do(func() { ran++ })
		s.Do(func() { ran++ })
		if ran != 2 {
			t.Errorf("f ran %d times, want 2", ran)
		}
	})
}
