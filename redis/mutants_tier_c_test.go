package redis

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/cellrate/cellrate/limit"
)

// tierC is a time on the monotonic clock for the tests that choose their
// times: 1000s, a whole millisecond.
const tierC = int64(1000 * time.Second)

// TestTwoTierSweepSpan: sweep drops idle entries at most once a second: a
// call less than a second after the last sweep keeps them, one a second
// after drops them.
func TestTwoTierSweepSpan(t *testing.T) {
	tt, err := NewTwoTier(offline, "sp", 10, time.Second, 10)
	if err != nil {
		t.Fatal(err)
	}
	has := func() bool { _, ok := tt.entries.Load("k"); return ok }
	tt.entry("k") // an empty pool: idle
	tt.swept.Store(tierC)
	tt.sweep(tierC + int64(999*time.Millisecond))
	if !has() {
		t.Fatal("an entry swept less than a second after the last sweep")
	}
	tt.sweep(tierC + int64(time.Second))
	if has() {
		t.Fatal("an idle entry kept by a sweep a second after the last")
	}
	tt.entry("k")
	tt.sweep(tierC + int64(1500*time.Millisecond))
	if !has() {
		t.Fatal("an entry swept half a second after the last sweep")
	}
}

// TestEntryIdle: an entry is idle when its pool is empty or its lease
// ended (at its deadline, not after), and no denial is cached past now.
func TestEntryIdle(t *testing.T) {
	ms := uint64(tierC / 1e6)
	for _, tc := range []struct {
		name string
		word uint64
		deny int64
		idle bool
	}{
		{"empty", 0, 0, true},
		{"units in a live lease", (ms+1)<<tokBits | 3, 0, false},
		{"units in a lease ending now", ms<<tokBits | 3, 0, true},
		{"units in a lease ended", (ms-1)<<tokBits | 3, 0, true},
		{"no units in a live lease", (ms + 1) << tokBits, 0, true},
		{"a denial ending now", 0, tierC, true},
		{"a denial cached", 0, tierC + 1, false},
		{"units in a live lease and a denial", (ms+1)<<tokBits | 3, tierC + 1, false},
	} {
		var e entry
		e.word.Store(tc.word)
		e.denyUntil.Store(tc.deny)
		if got := e.idle(tierC); got != tc.idle {
			t.Errorf("%s: idle %v, want %v", tc.name, got, tc.idle)
		}
	}
}

// TestTwoTierFollow: the fail-open limit follows a rate as its share of
// the events over the same period (20 per 2s at share 0.5: 5/s), and does
// nothing (no allocation) when it has that rate.
func TestTwoTierFollow(t *testing.T) {
	tt, err := NewTwoTier(offline, "fw", 20, 2*time.Second, 10, WithFailOpen(0.5))
	if err != nil {
		t.Fatal(err)
	}
	fb, err := newLocalLimiter(1, time.Second, 1)
	if err != nil {
		t.Fatal(err)
	}
	rt := tt.rate.Load()
	if err := tt.follow(fb, rt, tierC); err != nil {
		t.Fatal(err)
	}
	if fb.rate.Load() != rt {
		t.Fatal("the local limit does not record the rate it follows")
	}
	if r, err := localAllow(fb, tierC, 1); err != nil || !r.OK {
		t.Fatalf("the local burst: %+v %v", r, err)
	}
	if r, err := localAllow(fb, tierC, 1); err != nil || r.OK || r.RetryAfter != 200*time.Millisecond {
		t.Fatalf("after the local burst: %+v %v, want a wait of 200ms (5/s)", r, err)
	}
	if n := testing.AllocsPerRun(100, func() { tt.follow(fb, rt, tierC) }); n != 0 {
		t.Fatalf("following the rate it has: %v allocations", n)
	}
}

// TestTwoTierSetRatePeriod: a SetRate that changes only the period (or
// only the events) takes effect.
func TestTwoTierSetRatePeriod(t *testing.T) {
	tt, err := NewTwoTier(offline, "pe", 100, time.Second, 400)
	if err != nil {
		t.Fatal(err)
	}
	if err := tt.SetRateAt(0, 2.5); err != nil { // 5 per 2s
		t.Fatal(err)
	}
	for _, r := range []struct {
		events int64
		period time.Duration
	}{{5, time.Second}, {7, time.Second}} {
		if err := tt.SetRate(r.events, r.period); err != nil {
			t.Fatal(err)
		}
		if rt := tt.rate.Load(); rt.events != r.events || rt.period != r.period {
			t.Fatalf("SetRate(%d, %v): %d per %v", r.events, r.period, rt.events, rt.period)
		}
	}
}

// TestSetRateAtRefused: SetRateAt refuses a rate with no fraction (NaN,
// infinite, not positive, too small) with a *limit.ParamError naming
// perSecond, on a TwoTier and a GCRA Limiter; on a nil or zero TwoTier it
// returns ErrClosed, whatever the rate.
func TestSetRateAtRefused(t *testing.T) {
	tt, err := NewTwoTier(offline, "rf", 100, time.Second, 400)
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGCRA(offline, "rf", 10, time.Second, 5)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []float64{math.NaN(), math.Inf(1), 0, -1, 1e-12} {
		for name, set := range map[string]func(int64, float64) error{"TwoTier": tt.SetRateAt, "Limiter": g.SetRateAt} {
			var pe *limit.ParamError
			if err := set(0, x); !errors.As(err, &pe) || pe.Param != "perSecond" {
				t.Errorf("%s.SetRateAt(%v) = %v, want a ParamError for perSecond", name, x, err)
			}
		}
	}
	var zt *TwoTier
	for _, x := range []float64{1, math.NaN()} {
		for name, tt := range map[string]*TwoTier{"nil": zt, "zero": {}} {
			if err := tt.SetRateAt(0, x); !errors.Is(err, ErrClosed) {
				t.Errorf("%s TwoTier: SetRateAt(%v) = %v, want ErrClosed", name, x, err)
			}
		}
	}
}

// TestEntryShorten: a rate that rises cuts the time left to the units in
// the pool by the old rate over the new one, rounded down to the ms, also
// when the time left times the ratio (a fraction of 2^32) passes 64 bits
// (20s halved) and when the deadline's low 16 bits are zero. A rate that
// does not rise and an ended lease are left as they are.
func TestEntryShorten(t *testing.T) {
	r := func(events int64, period time.Duration) *tierRate {
		return &tierRate{events: events, period: period}
	}
	sec := int64(time.Second)
	ms := func(ns int64) uint64 { return uint64(ns / 1e6) }
	aligned := int64(1<<26) * 1e6 // a deadline of 2^26 ms
	for _, tc := range []struct {
		name      string
		old, rt   *tierRate
		now       int64
		word, out uint64
	}{
		{"doubled", r(1, time.Second), r(2, time.Second), tierC + 3e5,
			ms(tierC+sec)<<tokBits | 5, ms(tierC+3e5+(sec-3e5)/2)<<tokBits | 5},
		// 2^32/10 rounds down: 99.999999ms left, 99ms.
		{"tenfold, other terms", r(10, 2*time.Second), r(50, time.Second), tierC,
			ms(tierC+sec)<<tokBits | 5, ms(tierC+sec/10-1)<<tokBits | 5},
		{"doubled, 20s left", r(1, time.Second), r(2, time.Second), tierC,
			ms(tierC+20*sec)<<tokBits | 5, ms(tierC+10*sec)<<tokBits | 5},
		{"doubled, an aligned deadline", r(1, time.Second), r(2, time.Second), aligned - 2*sec,
			ms(aligned)<<tokBits | 1, ms(aligned-sec)<<tokBits | 1},
		{"the same rate", r(5, time.Second), r(10, 2*time.Second), tierC,
			ms(tierC+sec)<<tokBits | 5, ms(tierC+sec)<<tokBits | 5},
		{"slower", r(5, time.Second), r(1, time.Second), tierC,
			ms(tierC+sec)<<tokBits | 5, ms(tierC+sec)<<tokBits | 5},
		{"ended", r(1, time.Second), r(2, time.Second), tierC,
			ms(tierC-sec)<<tokBits | 5, ms(tierC-sec)<<tokBits | 5},
	} {
		var e entry
		e.word.Store(tc.word)
		e.shorten(tc.old, tc.rt, tc.now)
		if got := e.word.Load(); got != tc.out {
			t.Errorf("%s: deadline %dms, %d units; want %dms, %d units", tc.name,
				got>>tokBits, got&tokMask, tc.out>>tokBits, tc.out&tokMask)
		}
	}
}
