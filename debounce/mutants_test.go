package debounce

import (
	"testing"
	"time"

	"github.com/cellrate/cellrate/nanotime"
)

// Stop reports whether calls were pending: not on a Debouncer never
// called, yes when a call waits for its trailing run (which then never
// comes), and not again on a second Stop. (After a leading run: see
// TestStopAfterLeadingRun.)
func TestStopReportsPending(t *testing.T) {
	bubble(t, 50*time.Millisecond, func(d *Debouncer, r *recorder, clock nanotime.Clock) {
		if d.Stop() {
			t.Error("Stop on a Debouncer never called reported calls pending")
		}
	})
	bubble(t, 50*time.Millisecond, func(d *Debouncer, r *recorder, clock nanotime.Clock) {
		d.Call()
		time.Sleep(10 * time.Millisecond)
		if !d.Stop() {
			t.Error("Stop with a call waiting for its trailing run reported none pending")
		}
		if d.Stop() {
			t.Error("a second Stop reported calls pending")
		}
		time.Sleep(time.Second)
		equal(t, r.got(), nil)
	})
}

// A timer that fires while a driver is busy hands the burst to that driver
// (which decides again before leaving) and returns at once: the timer's
// goroutine never waits for a driver, so a long run of fn or a slow arming
// does not hold a second goroutine spinning.
func TestTimerLeavesBusyDriverAtOnce(t *testing.T) {
	ran := make(chan struct{}, 1)
	d, err := New(time.Microsecond, func() { ran <- struct{}{} })
	if err != nil {
		t.Fatal(err)
	}
	defer d.Stop()
	kickedSeen := make(chan bool, 1)
	armedHook = func() { // the driver has armed the timer for 1µs and holds the burst
		armedHook = nil
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			if d.st.Load()&kicked != 0 {
				kickedSeen <- true
				return
			}
			time.Sleep(time.Millisecond)
		}
		kickedSeen <- false
	}
	defer func() { armedHook = nil }()
	d.Call()
	if !<-kickedSeen {
		t.Fatal("the timer fired during the driver's arming but left no note for it within 5 s")
	}
	select {
	case <-ran:
	case <-time.After(5 * time.Second):
		t.Fatal("the trailing run never came")
	}
}

// A panic in fn reaches whoever ran fn even when calls made during the
// panicking run are already due: their run comes later, from the timer, and
// does not run (and so swallow the panic) before the panic is passed on.
func TestPanicLeadingWithARunDue(t *testing.T) {
	bubble(t, 10*time.Millisecond, func(d *Debouncer, r *recorder, clock nanotime.Clock) {
		n := 0
		r.during = func() {
			n++
			if n == 1 {
				d.Call()                          // pending during the panicking run
				time.Sleep(50 * time.Millisecond) // past its quiet period: due when fn returns
				panic("boom")
			}
		}
		func() {
			defer func() {
				if v := recover(); v != "boom" {
					t.Errorf("Call's caller recovered %v, want boom", v)
				}
			}()
			d.Call()
		}()
		time.Sleep(time.Second)
		equal(t, r.got(), []int64{0, 50 * ms})
	}, WithEdges(true, true))
}

// Flush runs fn once: calls made during its run are pending for a trailing
// run of their own, a wait after the latest of them, not run again at once.
func TestFlushCallsDuringRunWaitForTrailing(t *testing.T) {
	bubble(t, 50*time.Millisecond, func(d *Debouncer, r *recorder, clock nanotime.Clock) {
		n := 0
		r.during = func() {
			n++
			if n == 1 {
				d.Call()
			}
		}
		d.Call()
		time.Sleep(10 * time.Millisecond)
		if !d.Flush() {
			t.Error("Flush with a call pending did not run fn")
		}
		equal(t, r.got(), []int64{10 * ms})
		time.Sleep(time.Second)
		equal(t, r.got(), []int64{10 * ms, 60 * ms})
	})
}

// New accepts the least values its contract allows: a wait of 1 ns, a max
// wait equal to the wait, and either edge alone.
func TestNewAcceptsTheBounds(t *testing.T) {
	fn := func() {}
	for _, c := range []struct {
		name string
		wait time.Duration
		opts []Option
	}{
		{"wait 1ns", 1, nil},
		{"maxWait = wait", time.Second, []Option{WithMaxWait(time.Second)}},
		{"maxWait 0", time.Second, []Option{WithMaxWait(0)}},
		{"leading only", time.Second, []Option{WithEdges(true, false)}},
		{"trailing only", time.Second, []Option{WithEdges(false, true)}},
	} {
		d, err := New(c.wait, fn, c.opts...)
		if err != nil || d == nil {
			t.Errorf("%s: New refused: %v", c.name, err)
			continue
		}
		d.Stop()
	}
}

// fn never runs concurrently with itself: a timer that fires while Flush
// runs fn, with a call made during that run already due, leaves the run to
// Flush's driver, which runs it after fn returns.
func TestTimerDuringFlushRunWaits(t *testing.T) {
	bubble(t, 50*time.Millisecond, func(d *Debouncer, r *recorder, clock nanotime.Clock) {
		n := 0
		r.during = func() {
			n++
			if n == 1 {
				d.Call()                           // at 10 ms: due at 60 ms
				time.Sleep(100 * time.Millisecond) // the timer fires at 50 and 60 ms meanwhile
			}
		}
		d.Call() // the timer is armed for 50 ms
		time.Sleep(10 * time.Millisecond)
		if !d.Flush() {
			t.Error("Flush with a call pending did not run fn")
		}
		time.Sleep(time.Second)
		equal(t, r.got(), []int64{10 * ms, 110 * ms})
	})
}
