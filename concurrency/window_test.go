package concurrency

import (
	"sync"
	"sync/atomic"
	"testing"
)

// TestSamplerLosesNothing records from many goroutines while another
// closes windows as fast as it can: every sample lands in exactly one
// window, whole (a sample added to a window already read, or split
// across two, breaks the totals of counts, drops or latencies).
func TestSamplerLosesNothing(t *testing.T) {
	const workers = 8
	per := 20000
	if testing.Short() {
		per = 3000
	}
	var s sampler
	s.init(0)
	var wg sync.WaitGroup
	var stop atomic.Bool
	var n, drops, sum int64
	read := func(a *acc) {
		n, drops, sum = n+a.n.Load(), drops+a.drops.Load(), sum+a.sum.Load()
	}
	closer := make(chan struct{})
	go func() {
		defer close(closer)
		for now := int64(1); !stop.Load(); now++ {
			read(s.close(now))
		}
	}()
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				s.record(int64(g+1), int64(i), i%2 == 0)
			}
		}()
	}
	wg.Wait()
	stop.Store(true)
	<-closer
	read(s.close(1 << 40))
	wantSum := int64(per) * workers * (workers + 1) / 2
	if n != workers*int64(per) || drops != workers*int64(per)/2 || sum != wantSum {
		t.Fatalf("%d samples, %d drops, latency sum %d; want %d, %d, %d", n, drops, sum, workers*per, workers*per/2, wantSum)
	}
}

// TestEmptyWindow: a window closed with no samples (a release that
// recorded into the window before, racing with the one that closed it)
// reads as empty, with no latencies.
func TestEmptyWindow(t *testing.T) {
	var a acc
	a.reset(5)
	if w := a.window(9); w != (window{Start: 5, End: 9}) {
		t.Fatalf("an empty window: %+v", w)
	}
}
