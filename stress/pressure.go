package stress

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Pressure runs, until the returned stop is called, what makes a scheduler
// interleave worst: one spinning goroutine per P in a loop without calls
// (only asynchronous preemption can take its P away), a goroutine that
// forces a garbage collection every millisecond (stop-the-world pauses land
// inside the workers' read-modify-write windows), and allocation churn.
func Pressure() (stop func()) {
	var done atomic.Bool
	var wg sync.WaitGroup
	spin := func() {
		defer wg.Done()
		x := uint64(1)
		for !done.Load() {
			for i := 0; i < 1<<16; i++ {
				x ^= x << 13
				x ^= x >> 7
				x ^= x << 17
			}
		}
		sink.Store(x)
	}
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go spin()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !done.Load() {
			runtime.GC()
			garbage := make([][]byte, 64)
			for i := range garbage {
				garbage[i] = make([]byte, 1024)
			}
			sinkBytes.Store(&garbage)
			time.Sleep(time.Millisecond)
		}
	}()
	return func() {
		done.Store(true)
		wg.Wait()
	}
}

var (
	sink      atomic.Uint64
	sinkBytes atomic.Pointer[[][]byte]
)
