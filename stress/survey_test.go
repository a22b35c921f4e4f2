package stress

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cellrate/cellrate/adaptive"
	"github.com/cellrate/cellrate/coalesce"
	"github.com/cellrate/cellrate/debounce"
	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/nanotime"
	"github.com/cellrate/cellrate/pacer"
	"github.com/cellrate/cellrate/slidelog"
)

// slidelogSubject: at most lim in any (t-W, t] of the given times, so over
// any closed interval of length T (covered by floor(T/W)+1 such windows)
// at most lim + lim*T/W: Burst lim, Rate lim/W.
func slidelogSubject(name string, lim int64, w time.Duration) Subject {
	return Subject{
		Name:  name,
		New:   func() limit.Limiter { return must(slidelog.New(lim, w)) },
		MaxN:  lim,
		Burst: lim, Rate: RatePer(lim, w), GivenTimes: true, Window: w,
	}
}

func init() {
	subjects = append(subjects,
		slidelogSubject("slidelog-1-per-1ns", 1, 1),
		slidelogSubject("slidelog-7-per-3s", 7, 3*time.Second),
		slidelogSubject("slidelog-64-per-1ms", 64, time.Millisecond),
	)
}

// TestDebounceHammer: a crowd calls, flushes and (rarely) waits; fn's runs
// never overlap, and after the crowd stops, a run starts after the last call.
func TestDebounceHammer(t *testing.T) {
	var calls, seen, active atomic.Int64
	d, err := debounce.New(50*time.Microsecond, func() {
		if active.Add(1) != 1 {
			panic("debounce: fn runs concurrently with itself")
		}
		seen.Store(calls.Load())
		active.Add(-1)
	}, debounce.WithEdges(true, true), debounce.WithMaxWait(200*time.Microsecond))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Stop()
	err = Hammer(runFor(t), crowd(), seed(t), func(r *rand.Rand, g int) error {
		calls.Add(1)
		d.Call()
		if r.IntN(1000) == 0 {
			d.Flush()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for seen.Load() != calls.Load() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if seen.Load() != calls.Load() {
		t.Fatalf("the last run saw %d of %d calls", seen.Load(), calls.Load())
	}
	t.Logf("%d calls", calls.Load())
}

// TestCoalesceHammer: a crowd asks for a few keys; each execution's result
// names its key, executions of one key never overlap, and one panicking
// key's panic reaches its callers only.
func TestCoalesceHammer(t *testing.T) {
	var active [8]atomic.Int32
	var runs atomic.Int64
	g, err := coalesce.New(func(k int) (string, error) {
		if active[k].Add(1) != 1 {
			panic("coalesce: two executions of one key")
		}
		defer active[k].Add(-1)
		runs.Add(1)
		runtime.Gosched() // let callers join
		if k == 7 {
			panic("key 7")
		}
		return fmt.Sprint(k), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int64
	err = Hammer(runFor(t), crowd(), seed(t), func(r *rand.Rand, _ int) (err error) {
		k := r.IntN(8)
		calls.Add(1)
		defer func() {
			if p := recover(); p != nil {
				if _, ok := p.(*coalesce.PanicError); !ok || k != 7 {
					err = fmt.Errorf("key %d: panic %v", k, p)
				}
			}
		}()
		v, e := g.Do(context.Background(), k)
		if k == 7 {
			return fmt.Errorf("key 7 returned %q %v", v, e)
		}
		if v != fmt.Sprint(k) || e != nil {
			return fmt.Errorf("key %d got %q %v", k, v, e)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	g.Stop()
	t.Logf("%d calls, %d executions", calls.Load(), runs.Load())
}

// TestPacerHammer: a crowd reserves on a shared fake clock; every slot
// holds the pacer's bound (with 1 ns for the rounding up).
func TestPacerHammer(t *testing.T) {
	const events, period, slack = 7, 13511, 2
	p := must(pacer.New(events, period, pacer.WithSlack(slack)))
	var clock atomic.Int64
	var mu sync.Mutex
	var slots []int64
	err := Hammer(runFor(t), crowd(), seed(t), func(r *rand.Rand, _ int) error {
		now := clock.Add(r.Int64N(period / events))
		res := p.ReserveAt(now)
		if !res.OK {
			return fmt.Errorf("refused at %d", now)
		}
		if r.IntN(8) == 0 && res.Cancel() {
			return nil
		}
		mu.Lock()
		slots = append(slots, now+int64(res.Wait))
		mu.Unlock()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Sorted slots: any k+1 consecutive span at least (k - 1 - slack)*T - 1ns.
	slices.Sort(slots)
	for i := range slots {
		for k := 1 + slack; i+k < len(slots) && k < 64; k++ {
			span := slots[i+k] - slots[i]
			if (span+1)*events < int64(k-slack)*period {
				t.Fatalf("%d slots in %d ns", k+1, span)
			}
		}
	}
	t.Logf("%d slots", len(slots))
}

// TestAdaptiveHammer: a crowd counts requests and accepts across bucket
// boundaries on a real clock; the rejection probability the window's counts
// give stays in [0, 1) (the counts themselves are checked by the package's
// own tests).
func TestAdaptiveHammer(t *testing.T) {
	th := must(adaptive.New(2, time.Millisecond, adaptive.WithClock(nanotime.Now)))
	err := Hammer(runFor(t), crowd(), seed(t), func(r *rand.Rand, _ int) error {
		th.Allow()
		if r.IntN(2) == 0 {
			th.Accepted()
		}
		if p := th.RejectProbability(); p < 0 || p >= 1 {
			return fmt.Errorf("probability %v", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
