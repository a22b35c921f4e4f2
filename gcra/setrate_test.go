package gcra

import (
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cellrate/cellrate/limit"
)

// TestSetRateCarriesDebt: the events owed at the change are owed at the
// new rate, to the nanosecond, and a full limiter stays full.
func TestSetRateCarriesDebt(t *testing.T) {
	l, _ := New(1, time.Second, 2)
	s := int64(time.Second)
	l.AllowAt(0)
	l.AllowAt(0) // TAT 2s: at 0.5s, 1.5 events are owed
	ps, _ := NewParams(2, time.Second, 2)
	if err := l.SetRateAt(s/2, 2); err != nil {
		t.Fatal(err)
	}
	// 1.5 events at 0.5s each from 0.5s: TAT 1.25s; one event fits from
	// 1.25s - (2-1)*0.5s = 0.75s.
	if l.AllowAt(3*s/4 - 1) {
		t.Fatal("admitted 1ns before the debt carried over was paid")
	}
	if !l.AllowAt(3 * s / 4) {
		t.Fatal("refused once the debt carried over was paid")
	}
	if g, _ := l.live(); g.ps != ps {
		t.Fatalf("Params %+v, want %+v", g.ps, ps)
	}
	// A full limiter stays full through a change of rate.
	l, _ = New(1, time.Second, 3)
	_ = l.SetRateAt(10*s, 2)
	for i := range 4 {
		if l.AllowAt(10*s) != (i < 3) {
			t.Fatalf("full limiter after a change: event %d", i)
		}
	}
}

// TestSetRateConcurrent: SetRate racing admissions on every P, between
// a fast and a slow rate, neither tears a decision (the count admitted
// stays within the fastest rate's bound over the run and the slow rate's
// over its final stretch) nor stalls one (admissions go on after each
// change).
func TestSetRateConcurrent(t *testing.T) {
	const fast, slow = 1e6, 1e3 // per second
	var clock atomic.Int64
	l, _ := NewRate(fast, 4, WithClock(func() int64 { return clock.Add(10) }))
	var admitted atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				if l.Allow() {
					admitted.Add(1)
				}
			}
		}()
	}
	changes := 200
	if testing.Short() {
		changes = 40
	}
	for i := range changes {
		rate := fast
		if i%2 == 1 {
			rate = slow
		}
		before := admitted.Load()
		if err := l.SetRate(rate); err != nil {
			t.Fatal(err)
		}
		if rate == fast {
			for admitted.Load() == before {
				time.Sleep(10 * time.Microsecond) // stalls fail by the test's timeout
			}
		}
	}
	_ = l.SetRate(slow)
	n0, c0 := admitted.Load(), clock.Load()
	for clock.Load() < c0+int64(50*time.Microsecond) {
		time.Sleep(time.Microsecond)
	}
	stop.Store(true)
	wg.Wait()
	// Over the whole run, the fast rate bounds everything: the clock
	// advanced c ns, so at most 4 + c/1000 events.
	if n, c := admitted.Load(), clock.Load(); n > 4+c/1000+1 {
		t.Fatalf("%d admitted over %d ns, bound %d", n, c, 4+c/1000)
	}
	// After the last change to the slow rate, at most its burst plus what
	// it refills (the fast debt carried over only delays it).
	if n, c := admitted.Load()-n0, clock.Load()-c0; n > 4+c/int64(time.Millisecond)+1 {
		t.Fatalf("%d admitted under the slow rate over %d ns", n, c)
	}
}

// TestSetRateRefundAcross: a receipt or a reservation from before a
// change gives nothing back after it; one from after it does.
func TestSetRateRefundAcross(t *testing.T) {
	l, _ := New(1, time.Second, 1)
	_, rc, _ := l.TakeAt(0, 1)
	res, _ := l.ReserveNAt(0, 1) // acts at 1s
	_ = l.SetRateAt(0, 1)        // same rate: the TAT's value carries over unchanged
	tat := l.state()
	l.Refund(rc)
	if res.CancelAt(0) {
		t.Fatal("a reservation from before the change cancelled")
	}
	if l.state() != tat {
		t.Fatalf("a receipt from before the change gave back: TAT %d, was %d", l.state(), tat)
	}
	res, _ = l.ReserveNAt(0, 1)
	if !res.CancelAt(0) || l.state() != tat {
		t.Fatal("a reservation after the change did not cancel")
	}
}

// TestSetRateZero: the zero Limiter, of burst 0, refuses every rate, and
// a rate out of NewRate's range is refused.
func TestSetRateZero(t *testing.T) {
	var l Limiter
	var pe *limit.ParamError
	if err := l.SetRateAt(0, 1); !errors.As(err, &pe) || pe.Param != "burst" {
		t.Fatalf("zero Limiter: %v", err)
	}
	if l.AllowAt(0) {
		t.Fatal("the zero Limiter admitted after a refused SetRate")
	}
	g, _ := New(1, time.Second, 1)
	for _, r := range []float64{0, -1, 2e9, math.NaN(), math.Inf(1)} {
		if err := g.SetRateAt(0, r); !errors.As(err, &pe) || pe.Param != "rate" {
			t.Fatalf("rate %v: %v", r, err)
		}
	}
}
