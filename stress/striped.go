package stress

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"time"
)

// A Counter is a sharded counter like striped.Counter.
type Counter interface {
	Add(n int64)
	Load() int64
}

// CounterBounds has goroutines Add random non-negative amounts to c while
// others Load it, with GOMAXPROCS changing underneath (the counter grows
// its cells when it rises). Around every Add it counts the amount as begun,
// then as completed, so each Load can be checked against the bounds a
// striped counter promises: at least what was completed before the Load
// began, at most what was begun before it returned; and no less than any
// Load that returned before it began. At the end, with nothing running,
// Load must be exact.
func CounterBounds(c Counter, d time.Duration, goroutines int, seed uint64) error {
	var begun, completed, lastLoad atomic.Int64
	procs := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(procs)
	stopProcs := make(chan struct{})
	procsDone := make(chan struct{})
	go func() {
		defer close(procsDone)
		r := rand.New(rand.NewPCG(seed, 1<<32))
		for {
			select {
			case <-stopProcs:
				return
			case <-time.After(time.Millisecond):
				runtime.GOMAXPROCS(1 + r.IntN(2*procs))
			}
		}
	}()
	err := Hammer(d, goroutines, seed, func(r *rand.Rand, g int) error {
		if g%4 != 0 {
			n := r.Int64N(1000)
			begun.Add(n)
			c.Add(n)
			completed.Add(n)
			return nil
		}
		floor, before := lastLoad.Load(), completed.Load()
		v := c.Load()
		after := begun.Load()
		if v < before || v > after {
			return fmt.Errorf("counter bounds: Load = %d, outside [%d completed before, %d begun after]", v, before, after)
		}
		if v < floor {
			return fmt.Errorf("counter bounds: Load = %d after an earlier Load returned %d", v, floor)
		}
		for {
			old := lastLoad.Load()
			if v <= old || lastLoad.CompareAndSwap(old, v) {
				return nil
			}
		}
	})
	close(stopProcs)
	<-procsDone
	if err != nil {
		return err
	}
	if v, want := c.Load(), completed.Load(); v != want {
		return fmt.Errorf("counter bounds: quiescent Load = %d, want %d", v, want)
	}
	return nil
}
