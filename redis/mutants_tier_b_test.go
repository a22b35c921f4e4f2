package redis

import (
	"math"
	"testing"
	"time"
)

// TestTierRateEdges: refill rounds up and units down, exactly at and
// around whole multiples, and both saturate instead of dividing past 64
// bits (a quotient of 2^64 or more: hi of the product equal to the divisor
// is the first such, where bits.Div64 would panic).
func TestTierRateEdges(t *testing.T) {
	r3 := &tierRate{events: 3, period: 10} // 3 units per 10ns
	slow := &tierRate{events: 1, period: 1 << 47}
	huge := &tierRate{events: 3, period: 1 << 62}
	for _, tc := range []struct {
		name    string
		rt      *tierRate
		k, want int64
	}{
		{"0 units", r3, 0, 0},
		{"1 unit, 10/3 up", r3, 1, 4},
		{"2 units, 20/3 up", r3, 2, 7},
		{"3 units, exactly 10", r3, 3, 10},
		{"6 units, exactly 20", r3, 6, 20},
		{"k*period = 2^64-2^47, past int64", slow, 1<<17 - 1, int64(never)},
		{"k*period = 2^64: hi = events", slow, 1 << 17, int64(never)},
		{"ceil(2^64/3) fits", huge, 4, 6148914691236517206},
		{"exactly 2^63: past int64", huge, 6, int64(never)},
	} {
		if got := tc.rt.refill(tc.k); got != tc.want {
			t.Errorf("refill %s: %d, want %d", tc.name, got, tc.want)
		}
	}
	fast := &tierRate{events: 1 << 40, period: 1 << 20}
	for _, tc := range []struct {
		name    string
		rt      *tierRate
		d, want int64
	}{
		{"d -1", r3, -1, 0},
		{"d 0", r3, 0, 0},
		{"d 3: 9/10", r3, 3, 0},
		{"d 4: 12/10", r3, 4, 1},
		{"d 10: exactly 3", r3, 10, 3},
		{"d 20: exactly 6", r3, 20, 6},
		{"d*events = 2^64-2^40: quotient past int64", fast, 1<<44 - 1, math.MaxInt64},
		{"d*events = 2^84: hi = period", fast, 1 << 44, math.MaxInt64},
		{"d*events = 2^84+2^40: hi = period", fast, 1<<44 + 1, math.MaxInt64},
	} {
		if got := tc.rt.units(tc.d); got != tc.want {
			t.Errorf("units %s: %d, want %d", tc.name, got, tc.want)
		}
	}
	for _, tc := range []struct{ a, b, want int64 }{
		{0, 0, 0},
		{2, 3, 5},
		{math.MaxInt64 - 5, 4, math.MaxInt64 - 1},
		{math.MaxInt64 - 5, 5, math.MaxInt64},
		{math.MaxInt64 - 5, 6, math.MaxInt64},
		{6, math.MaxInt64 - 5, math.MaxInt64},
		{math.MaxInt64, math.MaxInt64, math.MaxInt64},
	} {
		if got := satAdd(tc.a, tc.b); got != tc.want {
			t.Errorf("satAdd(%d, %d) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

// tierAt returns a TwoTier whose rate in force is rt (all release reads of
// it), and a time on a whole millisecond an hour ahead of the monotonic
// clock, so that the leases the tests give end after the clock add reads.
func tierAt(rt *tierRate) (*TwoTier, int64) {
	tt := new(TwoTier)
	tt.rate.Store(rt)
	return tt, (monotonic()/1e6 + 3600e3) * 1e6
}

// pool returns the units in e's pool and its deadline in ms.
func pool(e *entry) (tok, dlMs int64) {
	w := e.word.Load()
	return int64(w & tokMask), int64(w >> tokBits)
}

// TestReleaseEdges: release puts a reserved unit in the pool from the very
// ns it is there, with a lease ending 1ns before end+refill(i) (so the
// pool's deadline in ms is rounded down from that), puts a unit whose
// lease has already ended in at once (void), puts in only the units still
// held, and keeps a denial cached by a borrow that found none when no
// unit is still to come.
func TestReleaseEdges(t *testing.T) {
	ms := int64(time.Millisecond)
	rt := &tierRate{events: 1, period: time.Millisecond, lease: 10 * ms} // unit i at base + i ms
	t.Run("at its time", func(t *testing.T) {
		tt, b := tierAt(rt)
		e := new(entry)
		e.res = reservation{n: 4, base: b, end: b + 10*ms, rate: rt}
		e.reserving.Store(true)
		tt.release(e, b)
		tok, dl := pool(e)
		if tok != 1 || e.res.out != 1 || e.denyUntil.Load() != b+ms {
			t.Fatalf("at unit 0's time: pool %d, out %d, denied until base%+d, want 1, 1, base+1ms",
				tok, e.res.out, e.denyUntil.Load()-b)
		}
		// Its lease ends at b+10ms-1: the pool's deadline is b+9ms.
		if dl != b/1e6+9 {
			t.Fatalf("deadline base%+dms, want base+9ms", dl-b/1e6)
		}
		tt.release(e, b+ms-1)
		if tok, _ := pool(e); tok != 1 || e.res.out != 1 || e.denyUntil.Load() != b+ms {
			t.Fatalf("1ns before unit 1: pool %d, out %d, denied until base%+d", tok, e.res.out, e.denyUntil.Load()-b)
		}
	})
	t.Run("lease ended before its time", func(t *testing.T) {
		// A round trip longer than the lease: unit i's lease ends at
		// b-5ms+i ms-1, before its time b+i ms.
		tt, b := tierAt(rt)
		e := new(entry)
		e.res = reservation{n: 4, base: b, end: b - 5*ms, rate: rt}
		e.reserving.Store(true)
		tt.release(e, b-5*ms-2)
		if tok, _ := pool(e); tok != 0 || e.denyUntil.Load() != b {
			t.Fatalf("before unit 0's lease ends: pool %d, denied until base%+d, want 0, base", tok, e.denyUntil.Load()-b)
		}
		tt.release(e, b-5*ms-1) // unit 0's lease ends now: void, in at once
		tok, dl := pool(e)
		if tok != 1 || e.res.out != 1 || e.denyUntil.Load() != b+ms {
			t.Fatalf("at unit 0's lease end: pool %d, out %d, denied until base%+d, want 1, 1, base+1ms",
				tok, e.res.out, e.denyUntil.Load()-b)
		}
		if dl != b/1e6-6 {
			t.Fatalf("deadline base%+dms, want base-6ms", dl-b/1e6)
		}
	})
	t.Run("void units are not spent", func(t *testing.T) {
		// On the monotonic clock: units 0 and 1 were there 5ms and 4ms ago,
		// and their leases ended 4ms and 3ms ago (and 1ns).
		tt, _ := tierAt(rt)
		now := monotonic()
		e := new(entry)
		e.res = reservation{n: 2, base: now - 5*ms, end: now - 4*ms, rate: rt}
		tt.release(e, now)
		if tok, dl := pool(e); tok != 2 || dl != (now-4*ms-1)/1e6 {
			t.Fatalf("pool %d to %dms, want 2 to %dms", tok, dl, (now-4*ms-1)/1e6)
		}
		if r, _, ok := e.spend(1); ok {
			t.Fatalf("a unit whose lease ended was spent: %+v", r)
		}
	})
	t.Run("the rest", func(t *testing.T) {
		tt, b := tierAt(rt)
		e := new(entry)
		e.res = reservation{n: 4, out: 2, base: b, end: b + 10*ms, rate: rt}
		e.reserving.Store(true)
		tt.release(e, b+time.Hour.Nanoseconds())
		tok, dl := pool(e)
		if tok != 2 || e.res.out != 4 || e.reserving.Load() {
			t.Fatalf("2 of 4 held, all due: pool %d, out %d, reserving %v, want 2, 4, false", tok, e.res.out, e.reserving.Load())
		}
		if dl != b/1e6+11 { // unit 2's lease: b+10ms+2ms-1
			t.Fatalf("deadline base%+dms, want base+11ms", dl-b/1e6)
		}
	})
	t.Run("denial kept after a rate change", func(t *testing.T) {
		tt, b := tierAt(&tierRate{events: 2, period: time.Millisecond, lease: 5 * ms})
		e := new(entry)
		e.res = reservation{n: 3, out: 3, base: b - ms, end: b, rate: rt}
		e.denyUntil.Store(b + 7*ms)
		tt.release(e, b)
		if e.denyUntil.Load() != b+7*ms {
			t.Fatalf("nothing still to come: denied until base%+d, want base+7ms", e.denyUntil.Load()-b)
		}
		// With units still to come, they are void and so is their denial.
		e.res.out = 1
		e.reserving.Store(true)
		tt.release(e, b)
		if e.denyUntil.Load() != 0 || e.res.out != 3 || e.reserving.Load() {
			t.Fatalf("units to come: denied until %d, out %d, reserving %v, want 0, 3, false",
				e.denyUntil.Load(), e.res.out, e.reserving.Load())
		}
	})
}

// TestAwaitingWait: a request for n units while a reservation's are to
// come waits until the pool's units and the next ones out make n (capped
// at the last reserved), from the time asked, and reports the pool's units.
func TestAwaitingWait(t *testing.T) {
	ms := int64(time.Millisecond)
	rt := &tierRate{events: 1, period: time.Millisecond}
	tt, b := tierAt(rt)
	for _, tc := range []struct {
		name         string
		out, tok, n  int64
		now, wait    int64 // wait after now, ns
		wantRemained int64
	}{
		{"the first, 3ms ahead", 0, 0, 1, b - 3*ms, 3 * ms, 0},
		{"1 out, 2 more", 1, 0, 2, b - 3*ms, 5 * ms, 0},
		{"1 in the pool, 1 more", 0, 1, 2, b - 3*ms, 3 * ms, 1},
		{"2 in the pool, 4 more: the fourth", 0, 2, 6, b, 3 * ms, 2},
		{"past the last: the last", 3, 0, 5, b, 4 * ms, 0},
		{"all in the pool: the next", 2, 5, 5, b - ms, 3 * ms, 5},
		{"its time passed: 1ns", 0, 0, 1, b + ms, 1, 0},
	} {
		e := new(entry)
		e.res = reservation{n: 5, out: tc.out, base: b, end: b + 10*ms, rate: rt}
		e.word.Store(uint64(b/1e6+100)<<tokBits | uint64(tc.tok))
		r := tt.awaiting(e, tc.now, tc.n)
		if r.OK || int64(r.RetryAfter) != tc.wait || r.Remaining != tc.wantRemained {
			t.Errorf("%s: %+v, want a denial for %v with %d left", tc.name, r, time.Duration(tc.wait), tc.wantRemained)
		}
	}
}

// TestResizeEdges: the next borrow is what was spent per half lease since
// the last borrow (at most double the last, at most the limit); a borrow
// that brought none, or a clock that has not moved since it, keeps the
// size as it was.
func TestResizeEdges(t *testing.T) {
	const lease, limit = 1000, 100
	mk := func(got, tok, at, size int64) *entry {
		e := &entry{at: at, got: got, size: size}
		e.word.Store(1<<40 | uint64(tok))
		return e
	}
	for _, tc := range []struct {
		name                string
		got, tok, at, size  int64
		now, want, wantSize int64
	}{
		{"the last brought none", 0, 0, 100, 4, 200, 4, 4},
		{"the last brought none, size 0", 0, 0, 100, 0, 200, 1, 0},
		{"no time since", 4, 0, 1000, 3, 1000, 3, 3},
		{"2 of 4 spent in half a lease", 4, 2, 0, 3, 500, 2, 2},
		{"2 of 4 spent in a lease", 4, 2, 0, 3, 1000, 1, 1},
		{"3 of 4 spent in a quarter lease: 6", 4, 1, 0, 3, 250, 6, 6},
		{"4 of 4 spent at once: double", 4, 0, 0, 3, 1, 8, 8},
		{"more in the pool than brought", 4, 9, 0, 3, 500, 1, 1},
	} {
		e := mk(tc.got, tc.tok, tc.at, tc.size)
		if got := e.resize(tc.now, lease, limit); got != tc.want || e.size != tc.wantSize {
			t.Errorf("%s: %d (size %d), want %d (size %d)", tc.name, got, e.size, tc.want, tc.wantSize)
		}
	}
	e := mk(90, 0, 0, 3)
	if got := e.resize(1, lease, limit); got != limit {
		t.Errorf("90 spent at once: %d, want the limit %d", got, limit)
	}
}

// TestReclaimEdges: reclaim empties the pool and gives back its units, at
// most the last borrow's, only once the lease has ended (at its deadline
// or after: a unit taken then is void); a live pool is left whole.
func TestReclaimEdges(t *testing.T) {
	for _, tc := range []struct {
		name            string
		dl, tok, lastM  int64 // deadline in ms
		now, give, left int64
	}{
		{"live, 1ns before", 5_000_123, 3, 5, 5_000_123*1e6 - 1, 0, 3},
		{"live, long before", 5_000_123, 3, 5, 1, 0, 3},
		{"at its deadline", 5_000_123, 3, 5, 5_000_123 * 1e6, 3, 0},
		{"after it: at most the last borrow's", 5_000_123, 3, 2, 6_000_000 * 1e6, 2, 0},
		{"empty", 5_000_123, 0, 5, 6_000_000 * 1e6, 0, 0},
		{"live, deadline 1ms", 1, 7, 5, 1e6 - 1, 0, 7},
		{"at a deadline of 1ms", 1, 7, 5, 1e6, 5, 0},
	} {
		e := &entry{lastM: tc.lastM}
		e.word.Store(uint64(tc.dl)<<tokBits | uint64(tc.tok))
		give := e.reclaim(tc.now)
		if tok, _ := pool(e); give != tc.give || tok != tc.left {
			t.Errorf("%s: gave %d, %d left, want %d, %d", tc.name, give, tok, tc.give, tc.left)
		}
	}
}
