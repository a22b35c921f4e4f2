package gcra

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestSetRateBoundReservedBefore: the bound across a change, with reserved
// events counted at their time to act as the package contract counts them.
// Ten events reserved at 1/s act at 0..9s; a change to 1000/s at 0 converts
// their debt to 10ms, so at 9s the limiter admits one more beside the
// reservation acting then: 2 events at one instant against a burst of 1.
func TestSetRateBoundReservedBefore(t *testing.T) {
	t.Skip("bug: SetRateAt converts a reservation's debt to the new rate while the reservation keeps its old time to act; the stated bound fails (2 events at 9s, burst 1)")
	s := int64(time.Second)
	l, _ := New(1, time.Second, 1)
	for range 10 {
		if r, _ := l.ReserveNAt(0, 1); !r.OK {
			t.Fatal("reservation refused")
		}
	}
	if err := l.SetRateAt(0, 1000); err != nil {
		t.Fatal(err)
	}
	if l.AllowAt(9 * s) { // the tenth reservation acts at 9s
		t.Fatal("admitted at 9s beside the reservation acting at 9s: 2 events at one instant, burst 1")
	}
}

// TestSetRateBoundStaleNow: a SetRateAt whose now is before an admission
// already made (a lagging clock, as the package contract allows for
// decisions) converts the time between the two as debt at the new rate, and
// the limiter admits again at that admission's instant.
func TestSetRateBoundStaleNow(t *testing.T) {
	t.Skip("bug: SetRateAt with a now before an earlier admission's now shrinks that admission's debt; 2 events at 100s against a burst of 1")
	s := int64(time.Second)
	l, _ := New(1, time.Second, 1)
	if !l.AllowAt(100 * s) {
		t.Fatal("a full limiter refused")
	}
	if err := l.SetRateAt(0, 1000); err != nil {
		t.Fatal(err)
	}
	if l.AllowAt(100 * s) {
		t.Fatal("admitted twice at 100s across a change made at an earlier now: burst 1")
	}
}

// TestSetRateConcurrentMixed: SetRate racing every kind of decision
// (AllowN, TakeAt with Refund, ReserveN with CancelAt, Allow) on a clock
// that only moves forward; under -race, no data race, and the events kept
// (taken less given back) stay within the fastest rate's bound.
func TestSetRateConcurrentMixed(t *testing.T) {
	const fast, slow, b = 1e6, 1e4, 4 // per second
	var clock atomic.Int64
	l, _ := NewRate(fast, b, WithClock(func() int64 { return clock.Add(7) }))
	var kept atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				now := clock.Add(7)
				switch (i + w) % 4 {
				case 0:
					if r, _ := l.AllowNAt(now, 2); r.OK {
						kept.Add(2)
					}
				case 1:
					if r, rc, _ := l.TakeAt(now, 1); r.OK {
						kept.Add(1)
						if i%3 == 0 {
							before := l.state()
							l.Refund(rc)
							if l.state() != before {
								kept.Add(-1)
							}
						}
					}
				case 2:
					// A reservation that needs no wait is kept; one
					// that must wait is cancelled (or, if that fails,
					// left uncounted, which only weakens the check).
					if r, _ := l.ReserveNAt(now, 1); r.OK && r.Wait == 0 {
						kept.Add(1)
					} else if r.OK {
						r.CancelAt(now)
					}
				default:
					if l.Allow() {
						kept.Add(1)
					}
				}
			}
		}()
	}
	changes := 100
	if testing.Short() {
		changes = 20
	}
	for i := range changes {
		rate := fast
		if i%2 == 1 {
			rate = slow
		}
		if err := l.SetRate(rate); err != nil {
			t.Fatal(err)
		}
		for c := clock.Load(); clock.Load() < c+7*100; {
			runtime.Gosched() // let the deciders run 100 decisions
		}
	}
	stop.Store(true)
	wg.Wait()
	if n, c := kept.Load(), clock.Load(); n > b+c/1000+1 {
		t.Fatalf("%d kept over %d ns, bound %d", n, c, b+c/1000)
	}
}

// TestCancelStaleValue: a Reservation is a value; a copy of one (passed
// by value, kept in a struct) that is cancelled after the original was
// cancelled and the same event reserved again (the TAT back to the value
// the first wrote) gives back the second reservation's event: two events
// at one instant against a burst of 1. bucket.Reservation is the same.
func TestCancelStaleValue(t *testing.T) {
	t.Skip("bug: a copied gcra (or bucket) Reservation cancels a later reservation that wrote the same TAT; rate.Reservation is now vet-guarded, these are not")
	l, _ := New(1, time.Second, 1)
	r1, _ := l.ReserveNAt(0, 1)
	cancel := func(r Reservation) bool { return r.CancelAt(0) }
	if !cancel(r1) { // a copy is cancelled; r1 still says OK
		t.Fatal("the first cancel gave nothing back")
	}
	if r2, _ := l.ReserveNAt(0, 1); !r2.OK || r2.Wait != 0 {
		t.Fatal("the cancelled event was not there again")
	}
	r1.CancelAt(0)
	if l.AllowAt(0) {
		t.Fatal("a stale copy gave back a later reservation's event: 2 events at 0, burst 1")
	}
}
