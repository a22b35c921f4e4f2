package atomic128

import (
	"sync"
	"testing"
)

// publish writes plain data, publishes it through x with write, and has a
// reader that observes the publication with observe read the data. Under
// -race this reports a data race unless the cell's operations establish
// happens-before, as sync/atomic's do.
func publish(x *Uint64Pair, write func(x *Uint64Pair), observe func(x *Uint64Pair) bool) int {
	var data int
	var got int
	var wg sync.WaitGroup
	wg.Go(func() {
		for !observe(x) {
		}
		got = data
	})
	data = 42
	write(x)
	wg.Wait()
	return got
}

var (
	writers = map[string]func(x *Uint64Pair){
		"Store":          func(x *Uint64Pair) { x.Store(1, 1) },
		"Swap":           func(x *Uint64Pair) { x.Swap(1, 1) },
		"CompareAndSwap": func(x *Uint64Pair) { x.CompareAndSwap(0, 0, 1, 1) },
	}
	observers = map[string]func(x *Uint64Pair) bool{
		"Load":           func(x *Uint64Pair) bool { a, _ := x.Load(); return a == 1 },
		"CompareAndSwap": func(x *Uint64Pair) bool { return x.CompareAndSwap(1, 1, 1, 1) },
	}
)

// TestPublishThroughCell: data written before a Store, Swap or successful
// CompareAndSwap is visible to, and under -race not reported as racing
// with, a goroutine that observed the write by Load or CompareAndSwap.
func TestPublishThroughCell(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		for wn, w := range writers {
			for on, o := range observers {
				t.Run(wn+"/"+on, func(t *testing.T) {
					if got := publish(new(Uint64Pair), w, o); got != 42 {
						t.Fatalf("read %d after observing the publication, want 42", got)
					}
				})
			}
		}
	})
}
