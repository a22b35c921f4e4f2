package redis

import (
	"testing"
	"time"
)

// TestRemainingLiveUnits: what a TwoTier reports as Remaining, and the wait
// it derives from the pool, count only units whose lease is live: units
// past their lease are void (never spent, only given back), and counting
// them reported more than could be taken and waits shorter than the real
// ones.
func TestRemainingLiveUnits(t *testing.T) {
	tt, err := NewTwoTier(offline, "rl", 1000, time.Second, 100)
	if err != nil {
		t.Fatal(err)
	}
	ms := int64(time.Millisecond)
	now := monotonic()
	e := tt.entry("k")

	dl := uint64(now/ms + 100)
	e.word.Store(poolWord(dl, 7))
	if a, b := e.pooled(int64(dl)*ms-1), e.pooled(int64(dl)*ms); a != 7 || b != 0 {
		t.Fatalf("pooled 1ns before the lease's end: %d, at it: %d; want 7 and 0", a, b)
	}

	e.word.Store(poolWord(uint64(now/ms-1), 7)) // ended a ms ago
	if r, err := tt.AllowN(bg, "k", 0); err != nil || !r.OK || r.Remaining != 0 {
		t.Fatalf("AllowN(0) with void units: %+v %v, want admitted with 0 remaining", r, err)
	}

	rt := tt.rate.Load()
	r, _, _ := tt.received(e, rt, result{RetryAfter: time.Duration(5 * ms)}, 0, 1, now)
	if r.OK || r.Remaining != 0 {
		t.Fatalf("a borrow that found none, void units in the pool: %+v, want 0 remaining", r)
	}

	// A borrow whose round trip outlasted its lease: the units came in void.
	e.denyUntil.Store(0)
	r, _, _ = tt.received(e, rt, result{}, 3, 5, now-2*rt.lease)
	if r.OK || r.Remaining != 0 || int64(r.RetryAfter) != rt.refill(5) {
		t.Fatalf("3 units in a lease already ended, 5 asked: %+v, want 0 remaining and a wait of %v",
			r, time.Duration(rt.refill(5)))
	}
}

// TestAwaitingVoidUnits: while a reservation's units are to come, void
// units in the pool do not shorten the wait for n.
func TestAwaitingVoidUnits(t *testing.T) {
	ms := int64(time.Millisecond)
	rt := &tierRate{events: 1, period: time.Millisecond}
	tt, b := tierAt(rt)
	e := new(entry)
	e.res = reservation{n: 5, base: b, end: b + 10*ms, rate: rt}
	e.word.Store(poolWord(uint64((b-4*ms)/ms), 1)) // ended before now
	if r := tt.awaiting(e, b-3*ms, 2); r.OK || r.Remaining != 0 || r.RetryAfter != 4*time.Millisecond {
		t.Fatalf("2 asked, 1 void unit in the pool: %+v, want 0 remaining and a wait of 4ms (the second unit out)", r)
	}
}
