package debounce

import (
	"errors"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/nanotime"
)

const ms = int64(time.Millisecond)

// recorder is an fn that records the clock at each run's start and checks
// that runs never overlap.
type recorder struct {
	mu     sync.Mutex
	clock  nanotime.Clock
	runs   []int64
	active atomic.Int32
	hold   time.Duration // how long each run takes (virtual time in a bubble)
	t      *testing.T
	during func() // called inside each run, if set
}

func (r *recorder) fn() {
	if r.active.Add(1) != 1 {
		r.t.Error("fn runs concurrently with itself")
	}
	defer r.active.Add(-1)
	r.mu.Lock()
	r.runs = append(r.runs, r.clock())
	r.mu.Unlock()
	if r.during != nil {
		r.during()
	}
	if r.hold > 0 {
		time.Sleep(r.hold)
	}
}

func (r *recorder) got() []int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]int64(nil), r.runs...)
}

// bubble runs f in a synctest bubble with a Debouncer on the bubble's clock.
func bubble(t *testing.T, wait time.Duration, f func(d *Debouncer, r *recorder, clock nanotime.Clock), opts ...Option) {
	synctest.Test(t, func(t *testing.T) {
		clock := nanotime.Since()
		r := &recorder{clock: clock, t: t}
		d, err := New(wait, r.fn, append([]Option{WithClock(clock)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		f(d, r, clock)
		d.Stop()
	})
}

func equal(t *testing.T, got, want []int64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("runs at %v ms, want %v ms", div(got), div(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("runs at %v ms, want %v ms", div(got), div(want))
		}
	}
}

func div(x []int64) []int64 {
	out := make([]int64, len(x))
	for i, v := range x {
		out[i] = v / ms
	}
	return out
}

func TestTrailing(t *testing.T) {
	bubble(t, 50*time.Millisecond, func(d *Debouncer, r *recorder, clock nanotime.Clock) {
		for range 10 {
			d.Call()
			time.Sleep(10 * time.Millisecond)
		}
		// The last call was at 90 ms: one run at 140 ms.
		time.Sleep(time.Second)
		equal(t, r.got(), []int64{140 * ms})
		// A second burst runs again.
		d.Call() // at 1100 ms
		time.Sleep(time.Second)
		equal(t, r.got(), []int64{140 * ms, 1150 * ms})
		if d.timer.Stop() {
			t.Error("the timer is still armed after the burst closed")
		}
	})
}

func TestLeadingAndTrailing(t *testing.T) {
	bubble(t, 50*time.Millisecond, func(d *Debouncer, r *recorder, clock nanotime.Clock) {
		d.Call() // a lone call: the leading run only
		equal(t, r.got(), []int64{0})
		time.Sleep(time.Second)
		equal(t, r.got(), []int64{0})
		for range 3 { // 1000, 1010, 1020 ms
			d.Call()
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(time.Second)
		equal(t, r.got(), []int64{0, 1000 * ms, 1070 * ms})
	}, WithEdges(true, true))
}

func TestLeadingOnly(t *testing.T) {
	bubble(t, 50*time.Millisecond, func(d *Debouncer, r *recorder, clock nanotime.Clock) {
		for range 10 { // 0..90 ms: one burst
			d.Call()
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(30 * time.Millisecond) // 130 ms: the burst ends at 140
		d.Call()                          // still in the burst
		time.Sleep(200 * time.Millisecond)
		d.Call() // 330 ms: a new burst
		time.Sleep(time.Second)
		equal(t, r.got(), []int64{0, 330 * ms})
	}, WithEdges(true, false))
}

func TestMaxWait(t *testing.T) {
	bubble(t, 50*time.Millisecond, func(d *Debouncer, r *recorder, clock nanotime.Clock) {
		for range 100 { // a call every 10 ms for 1 s: never 50 ms of quiet
			d.Call()
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(time.Second)
		// Runs every 200 ms from the burst's start while calls are pending;
		// none is pending after the run at 1000 ms (the last call was at 990).
		equal(t, r.got(), []int64{200 * ms, 400 * ms, 600 * ms, 800 * ms, 1000 * ms})
	}, WithMaxWait(200*time.Millisecond))
}

func TestMaxWaitLeadingOnlyThrottles(t *testing.T) {
	bubble(t, 100*time.Millisecond, func(d *Debouncer, r *recorder, clock nanotime.Clock) {
		for range 50 { // every 10 ms for 500 ms
			d.Call()
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(time.Second)
		equal(t, r.got(), []int64{0, 100 * ms, 200 * ms, 300 * ms, 400 * ms, 500 * ms})
	}, WithEdges(true, false), WithMaxWait(100*time.Millisecond))
}

// Calls made while fn runs get a run of their own after it returns, no
// sooner than the wait after the latest of them.
func TestCallsDuringTrailingRun(t *testing.T) {
	bubble(t, 50*time.Millisecond, func(d *Debouncer, r *recorder, clock nanotime.Clock) {
		r.hold = 100 * time.Millisecond
		d.Call()                          // run 1 at 50 ms, until 150 ms
		time.Sleep(60 * time.Millisecond) // 60 ms: during run 1
		d.Call()
		time.Sleep(80 * time.Millisecond) // 140 ms: still during run 1
		d.Call()
		time.Sleep(time.Second)
		// The latest call was at 140 ms: quiet at 190 ms (run 1 ended at 150).
		equal(t, r.got(), []int64{50 * ms, 190 * ms})
	})
}

func TestCallFromFn(t *testing.T) {
	bubble(t, 50*time.Millisecond, func(d *Debouncer, r *recorder, clock nanotime.Clock) {
		var n atomic.Int32
		r.during = func() {
			if n.Add(1) < 3 {
				d.Call() // a run that asks for another
			}
		}
		d.Call()
		time.Sleep(time.Second)
		equal(t, r.got(), []int64{50 * ms, 100 * ms, 150 * ms})
	})
}

func TestLongRunAndMaxWait(t *testing.T) {
	// Runs longer than the max wait: the next run starts as soon as the
	// previous returns, and never overlaps it.
	bubble(t, 15*time.Millisecond, func(d *Debouncer, r *recorder, clock nanotime.Clock) {
		r.hold = 100 * time.Millisecond
		for range 30 { // every 10 ms, 0..290 ms
			d.Call()
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(time.Second)
		equal(t, r.got(), []int64{20 * ms, 120 * ms, 220 * ms, 320 * ms})
	}, WithMaxWait(20*time.Millisecond))
}

func TestStopDuringWait(t *testing.T) {
	bubble(t, 50*time.Millisecond, func(d *Debouncer, r *recorder, clock nanotime.Clock) {
		d.Call()
		time.Sleep(20 * time.Millisecond)
		if !d.Stop() {
			t.Error("Stop during a wait reported no pending call")
		}
		d.Call()
		time.Sleep(time.Second)
		equal(t, r.got(), nil)
		if d.timer.Stop() {
			t.Error("the timer is still armed after Stop")
		}
		if d.Stop() || d.Flush() {
			t.Error("a second Stop or a Flush after Stop did something")
		}
	})
}

func TestStopDuringRun(t *testing.T) {
	bubble(t, 50*time.Millisecond, func(d *Debouncer, r *recorder, clock nanotime.Clock) {
		r.hold = 100 * time.Millisecond
		d.Call()
		time.Sleep(60 * time.Millisecond) // the run started at 50 ms
		d.Call()                          // pending for the next run
		if !d.Stop() {
			t.Error("Stop with a call pending reported none")
		}
		time.Sleep(time.Second)
		equal(t, r.got(), []int64{50 * ms})
	})
}

func TestStopFromFn(t *testing.T) {
	bubble(t, 50*time.Millisecond, func(d *Debouncer, r *recorder, clock nanotime.Clock) {
		r.during = func() { d.Call(); d.Stop() }
		d.Call()
		time.Sleep(time.Second)
		equal(t, r.got(), []int64{50 * ms})
	})
}

func TestFlush(t *testing.T) {
	bubble(t, 50*time.Millisecond, func(d *Debouncer, r *recorder, clock nanotime.Clock) {
		if d.Flush() {
			t.Error("Flush with nothing pending ran fn")
		}
		d.Call()
		time.Sleep(10 * time.Millisecond)
		if !d.Flush() {
			t.Error("Flush with a call pending did not run fn")
		}
		equal(t, r.got(), []int64{10 * ms})
		time.Sleep(time.Second) // the burst is closed: no trailing run
		equal(t, r.got(), []int64{10 * ms})
		d.Call() // a new burst
		time.Sleep(time.Second)
		equal(t, r.got(), []int64{10 * ms, 1060 * ms})
	})
}

func TestFlushLeadingOnly(t *testing.T) {
	bubble(t, 50*time.Millisecond, func(d *Debouncer, r *recorder, clock nanotime.Clock) {
		d.Call() // leading run at 0
		if d.Flush() {
			t.Error("Flush right after a leading run ran fn again")
		}
		d.Call()
		if !d.Flush() {
			t.Error("Flush with a call pending did not run fn")
		}
		d.Call() // the flush closed the burst: this one leads
		equal(t, r.got(), []int64{0, 0, 0})
	}, WithEdges(true, false))
}

func TestPanicLeading(t *testing.T) {
	bubble(t, 50*time.Millisecond, func(d *Debouncer, r *recorder, clock nanotime.Clock) {
		boom := true
		r.during = func() {
			if boom {
				boom = false
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
		d.Call() // pending: the trailing run still comes
		time.Sleep(time.Second)
		equal(t, r.got(), []int64{0, 50 * ms})
	}, WithEdges(true, true))
}

func TestPanicTimer(t *testing.T) {
	var got []any
	bubble(t, 50*time.Millisecond, func(d *Debouncer, r *recorder, clock nanotime.Clock) {
		n := 0
		r.during = func() {
			n++
			if n == 1 {
				panic(errors.New("first"))
			}
		}
		d.Call()
		time.Sleep(time.Second)
		d.Call() // the Debouncer still works
		time.Sleep(time.Second)
		equal(t, r.got(), []int64{50 * ms, 1050 * ms})
	}, WithPanicHandler(func(v any) { got = append(got, v) }))
	if len(got) != 1 || got[0].(error).Error() != "first" {
		t.Errorf("handler got %v", got)
	}
}

func TestPanicTimerWithCallsPending(t *testing.T) {
	bubble(t, 50*time.Millisecond, func(d *Debouncer, r *recorder, clock nanotime.Clock) {
		n := 0
		r.during = func() {
			n++
			if n == 1 {
				d.Call() // pending during the panicking run
				panic("x")
			}
		}
		d.Call()
		time.Sleep(time.Second)
		equal(t, r.got(), []int64{50 * ms, 100 * ms})
	}, WithPanicHandler(func(any) {}))
}

func TestPanicFlush(t *testing.T) {
	bubble(t, 50*time.Millisecond, func(d *Debouncer, r *recorder, clock nanotime.Clock) {
		r.during = func() { panic("flush") }
		d.Call()
		func() {
			defer func() {
				if v := recover(); v != "flush" {
					t.Errorf("Flush's caller recovered %v", v)
				}
			}()
			d.Flush()
		}()
		r.during = nil
		d.Call()
		time.Sleep(time.Second)
		equal(t, r.got(), []int64{0, 50 * ms})
	})
}

func TestGoexitInFn(t *testing.T) {
	bubble(t, 50*time.Millisecond, func(d *Debouncer, r *recorder, clock nanotime.Clock) {
		first := true
		r.during = func() {
			if first {
				first = false
				d.Call() // pending: must still run
				runtime.Goexit()
			}
		}
		done := make(chan bool)
		go func() {
			defer close(done)
			d.Call() // a leading run that ends its goroutine
		}()
		<-done
		time.Sleep(time.Second)
		equal(t, r.got(), []int64{0, 50 * ms})
	}, WithEdges(true, true))
}

func TestNewRefuses(t *testing.T) {
	fn := func() {}
	for _, c := range []struct {
		param string
		wait  time.Duration
		fn    func()
		opts  []Option
	}{
		{"wait", 0, fn, nil},
		{"maxWait", time.Second, fn, []Option{WithMaxWait(time.Millisecond)}},
		{"edges", time.Second, fn, []Option{WithEdges(false, false)}},
		{"fn", time.Second, nil, nil},
		{"clock", time.Second, fn, []Option{WithClock(nil)}},
	} {
		_, err := New(c.wait, c.fn, c.opts...)
		var pe *limit.ParamError
		if !errors.As(err, &pe) || pe.Param != c.param || pe.Pkg != "debounce" {
			t.Errorf("%s: got %v", c.param, err)
		}
	}
}

func TestDecideAtTheEndsOfTime(t *testing.T) {
	p := params{wait: int64(time.Hour), maxWait: int64(2 * time.Hour), trailing: true}
	if a, at := p.decide(math.MaxInt64-1, math.MaxInt64-1, math.MaxInt64-1, true); a != actWait || at != math.MaxInt64 {
		t.Errorf("near the end: %v %d", a, at)
	}
	if a, _ := p.decide(math.MaxInt64, math.MaxInt64, math.MaxInt64, true); a != actRun {
		t.Errorf("at the end: %v", a) // quiet saturates to MaxInt64 == now
	}
	if a, at := p.decide(math.MinInt64, math.MinInt64, math.MinInt64, true); a != actWait || at != math.MinInt64+int64(time.Hour) {
		t.Errorf("at the start: %v %d", a, at)
	}
	if d := until(math.MinInt64, math.MaxInt64); d != math.MaxInt64 {
		t.Errorf("until across the range: %v", d)
	}
	if d := until(-5, 10); d != 15 {
		t.Errorf("until: %v", d)
	}
}

func TestCallAllocs(t *testing.T) {
	d, err := New(time.Hour, func() {})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Stop()
	d.Call()
	now := nanotime.Now()
	if a := testing.AllocsPerRun(1000, func() { d.CallAt(now) }); a != 0 {
		t.Errorf("CallAt allocates %v times", a)
	}
}

// Many goroutines call with real time: runs never overlap, and a run starts
// after the last call.
func TestConcurrent(t *testing.T) {
	var seq atomic.Int64
	var seen, active atomic.Int64
	d, err := New(200*time.Microsecond, func() {
		if active.Add(1) != 1 {
			t.Error("fn runs concurrently with itself")
		}
		seen.Store(seq.Load())
		active.Add(-1)
	}, WithEdges(true, true), WithMaxWait(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Stop()
	n := 20000
	if testing.Short() {
		n = 4000
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range n {
				seq.Add(1)
				d.Call()
				if g == 0 && i%500 == 0 {
					d.Flush()
				}
			}
		}()
	}
	wg.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for seen.Load() != seq.Load() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if seen.Load() != seq.Load() {
		t.Fatalf("the last run saw %d calls of %d", seen.Load(), seq.Load())
	}
}

// The timer fires between the driver arming it and giving up the driver
// bit: it must leave a kick, or nobody runs the burst. (Without the kick the
// trailing run never comes.)
func TestTimerFiresWhileDriverArms(t *testing.T) {
	ran := make(chan struct{}, 1)
	d, err := New(time.Microsecond, func() { ran <- struct{}{} })
	if err != nil {
		t.Fatal(err)
	}
	defer d.Stop()
	armedHook = func() { time.Sleep(20 * time.Millisecond) } // the timer fires meanwhile
	defer func() { armedHook = nil }()
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.Call() // arms the timer for 1µs, then sleeps in the hook
	}()
	<-done
	armedHook = nil
	select {
	case <-ran:
	case <-time.After(5 * time.Second):
		t.Fatal("the trailing run never came")
	}
}
