package concurrency

import (
	"context"
	"errors"
	"testing"
	"time"
)

// recAlg returns its outputs in turn (the last one repeated) and keeps
// the windows it was given.
type recAlg struct {
	out []float64
	got []window
}

func (r *recAlg) update(_ float64, w window) float64 {
	r.got = append(r.got, w)
	return r.out[min(len(r.got), len(r.out))-1]
}

func newRec(t *testing.T, r *recAlg, start int64, opts ...Option) *Limiter {
	t.Helper()
	l, err := newWith(r, append([]Option{WithClock(func() int64 { return start })}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestDropsAroundAFall: a window that leaves the limit where it was is no
// fall, so a later drop of a request admitted before it is a loss; a drop
// of one admitted at the instant the limit fell is a loss too.
func TestDropsAroundAFall(t *testing.T) {
	r := &recAlg{out: []float64{10, 10, 5}}
	l := newRec(t, r, 0, WithLimits(10, 1, 10), WithWindow(1, 1, 1))
	a, _ := l.TryAcquireAt(0)
	b, _ := l.TryAcquireAt(0)
	a.ReleaseAt(10, Success) // the limit holds at 10
	b.ReleaseAt(20, Dropped)
	if len(r.got) != 2 || r.got[1].Drops != 1 {
		t.Fatalf("windows %+v: want the second with a loss (no fall before it)", r.got)
	}
	c, _ := l.TryAcquireAt(25)
	c.ReleaseAt(30, Success) // the limit falls to 5 at 30
	d, _ := l.TryAcquireAt(30)
	d.ReleaseAt(40, Dropped)
	if len(r.got) != 4 || r.got[3].Drops != 1 {
		t.Fatalf("windows %+v: want the fourth with a loss (admitted at the fall)", r.got)
	}
}

// TestWindowClosesAtMaxDur: a window short of its samples closes once its
// maximum duration has passed since it began, not before.
func TestWindowClosesAtMaxDur(t *testing.T) {
	r := &recAlg{out: []float64{10}}
	l := newRec(t, r, 1000, WithLimits(10, 1, 10), WithWindow(1, 100, 10))
	a, _ := l.TryAcquireAt(1000)
	a.ReleaseAt(1099, Success)
	if len(r.got) != 0 {
		t.Fatalf("a window of 1 sample closed 99 after it began (max 100): %+v", r.got)
	}
	b, _ := l.TryAcquireAt(1099)
	b.ReleaseAt(1100, Success)
	if len(r.got) != 1 || r.got[0].Samples != 2 || r.got[0].Start != 1000 || r.got[0].End != 1100 {
		t.Fatalf("windows %+v: want one of 2 samples over [1000, 1100]", r.got)
	}
}

// TestRiseWakesAllWaiters: when the limit rises by two, both blocked
// Acquires are admitted by the one release that closed the window.
func TestRiseWakesAllWaiters(t *testing.T) {
	r := &recAlg{out: []float64{3}}
	l := newRec(t, r, 0, WithLimits(1, 1, 10), WithWindow(1, 1, 1))
	first, _ := l.TryAcquireAt(0)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := l.Acquire(ctx)
			errs <- err
		}()
	}
	for l.w.n.Load() < 2 {
		time.Sleep(time.Millisecond)
	}
	first.ReleaseAt(1, Success)
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("a waiter was not admitted after the limit rose to 3: %v", err)
		}
	}
}

// TestWindowSummary: a window reports its samples, losses, least and mean
// latency and the most requests in flight any of them saw.
func TestWindowSummary(t *testing.T) {
	r := &recAlg{out: []float64{10}}
	l := newRec(t, r, 0, WithLimits(10, 1, 10), WithWindow(1, 1000, 3))
	var toks []Token
	for range 3 {
		tok, _ := l.TryAcquireAt(0)
		toks = append(toks, tok)
	}
	toks[2].ReleaseAt(5, Success)
	toks[0].ReleaseAt(3, Dropped)
	toks[1].ReleaseAt(7, Success)
	want := window{Start: 0, End: 7, Samples: 3, Drops: 1, MinRTT: 3, AvgRTT: 5, MaxInFlight: 3}
	if len(r.got) != 1 || r.got[0] != want {
		t.Fatalf("windows %+v, want [%+v]", r.got, want)
	}
}

// TestWakeStaleCount: a wake that read a waiter count a remove then
// took back finds the queue empty and does nothing.
func TestWakeStaleCount(t *testing.T) {
	var w waiters
	w.n.Store(1)
	w.wake()
	w.wakeAll()
	if len(w.q) != 0 {
		t.Fatal("a wake of an empty queue queued something")
	}
}

// TestDoOutcomes: Do releases as Success when fn returns nil, as Dropped
// when isDrop says so, and as Ignored (no sample) otherwise.
func TestDoOutcomes(t *testing.T) {
	r := &recAlg{out: []float64{10}}
	now := int64(0)
	l, err := newWith(r, WithClock(func() int64 { now += 10; return now }), WithLimits(10, 1, 10), WithWindow(1, 1, 1))
	if err != nil {
		t.Fatal(err)
	}
	errDrop, errOther := errors.New("drop"), errors.New("other")
	isDrop := func(err error) bool { return err == errDrop }
	for _, ret := range []error{nil, errDrop, errOther} {
		if err := l.Do(context.Background(), func() error { return ret }, isDrop); err != ret {
			t.Fatalf("Do returned %v, want %v", err, ret)
		}
	}
	if len(r.got) != 2 || r.got[0].Samples != 1 || r.got[0].Drops != 0 || r.got[1].Samples != 1 || r.got[1].Drops != 1 {
		t.Fatalf("windows %+v: want a success, then a loss, then no sample", r.got)
	}
}
