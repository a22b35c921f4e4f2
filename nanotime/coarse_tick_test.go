package nanotime

import (
	"testing"
	"time"
)

// fakeTicker replaces the updater's ticker: the test sees the period the
// updater asks for and gives it one tick at a time, with no real time.
type fakeTicker struct {
	period  chan time.Duration // the period each started updater asked for
	waiting chan struct{}      // the updater handled its last tick and waits for the next
	tick    chan struct{}
	stopped chan struct{} // the updater stopped its ticker (it is exiting)
}

// useFakeTicker makes the updaters started by the test use a fakeTicker,
// until the test ends. Only the reader that starts an updater reads the
// hook, so updaters of earlier tests keep their real tickers.
func useFakeTicker(t *testing.T) *fakeTicker {
	f := &fakeTicker{
		period:  make(chan time.Duration, 1),
		waiting: make(chan struct{}),
		tick:    make(chan struct{}),
		stopped: make(chan struct{}, 1),
	}
	saved := newTicker
	newTicker = func(d time.Duration) (wait, stop func()) {
		f.period <- d
		wait = func() {
			f.waiting <- struct{}{}
			<-f.tick
		}
		return wait, func() { f.stopped <- struct{}{} }
	}
	t.Cleanup(func() { newTicker = saved })
	return f
}

// started waits for an updater to start and returns the period it asked
// for; the updater is then waiting for its first tick.
func (f *fakeTicker) started() time.Duration {
	d := <-f.period
	<-f.waiting
	return d
}

// step gives the updater one tick and waits until it has handled it:
// it reports false if the updater exited on that tick.
func (f *fakeTicker) step() bool {
	f.tick <- struct{}{}
	select {
	case <-f.waiting:
		return true
	case <-f.stopped:
		return false
	}
}

// TestCoarseAsksForResolution: the updater's ticker runs at the resolution
// (DefaultResolution for zero or negative), which is what the staleness
// bound in the doc rests on; an updater ticking at twice the resolution
// fails here every time.
func TestCoarseAsksForResolution(t *testing.T) {
	for _, tc := range []struct{ res, want time.Duration }{
		{0, DefaultResolution},
		{-time.Second, DefaultResolution},
		{time.Nanosecond, time.Nanosecond},
		{50 * time.Microsecond, 50 * time.Microsecond},
		{3 * time.Millisecond, 3 * time.Millisecond},
		{time.Hour, time.Hour},
	} {
		f := useFakeTicker(t)
		c := Coarse{Resolution: tc.res}
		c.Now()
		if got := f.started(); got != tc.want {
			t.Errorf("Resolution %v: the updater ticks every %v, want %v", tc.res, got, tc.want)
		}
		for f.step() {
		}
	}
}

// TestCoarseEveryTick ticks by hand and checks after each tick: the cached
// time was refreshed by that tick (it is not older than Now before the
// tick, and not ahead of Now after it); the updater marks the clock unread
// on tick 64 and exits on tick 128 when nothing reads it (the doc's
// "between 64 and 128 ticks with no read"), and a read in between keeps it
// running for another 64 ticks.
func TestCoarseEveryTick(t *testing.T) {
	for _, readAt := range []int{0, 64, 100} {
		f := useFakeTicker(t)
		var c Coarse
		c.Now()
		if d := f.started(); d != DefaultResolution {
			t.Fatalf("zero Coarse ticks every %v, want %v", d, DefaultResolution)
		}
		exitAt := 128
		if readAt != 0 {
			exitAt = 192
		}
		for n := 1; ; n++ {
			before := Now()
			running := f.step()
			got, after := c.t.Load(), Now()
			if got < before || got > after {
				t.Fatalf("read at %d: after tick %d the cached time is %d, want it in [%d, %d]: the tick did not refresh it",
					readAt, n, got, before, after)
			}
			if running != (n < exitAt) {
				t.Fatalf("read at %d: updater running %v after tick %d, want it to exit on tick %d", readAt, running, n, exitAt)
			}
			if !running {
				break
			}
			want := uint32(stateFresh)
			if n >= 64 && (readAt == 0 || n <= readAt || n >= 128) {
				want = stateUnread
			}
			if s := c.state.Load(); s != want {
				t.Fatalf("read at %d: state %d after tick %d, want %d", readAt, s, n, want)
			}
			if n == readAt {
				if got := c.Now(); got != c.t.Load() {
					t.Fatalf("read on tick %d returned %d, not the cached %d", n, got, c.t.Load())
				}
			}
		}
		if s := c.state.Load(); s != stateStopped {
			t.Fatalf("read at %d: state %d after the updater exited, want %d", readAt, s, stateStopped)
		}
	}
}
