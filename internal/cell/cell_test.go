package cell

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cellrate/cellrate/atomic128"
)

// inc is a step that counts up to limit and then declines to write.
func inc(limit uint64) func(uint64) (uint64, bool, bool) {
	return func(old uint64) (uint64, bool, bool) {
		if old >= limit {
			return old, false, false
		}
		return old + 1, true, true
	}
}

// TestRun64NoLostUpdate admits exactly limit increments across goroutines:
// a lost CAS that returned the step's result anyway would over-admit, and a
// write on a denial would move the cell past limit.
func TestRun64NoLostUpdate(t *testing.T) {
	const g, per, limit = 8, 5000, 20000
	var c atomic.Uint64
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for range g {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range per {
				if Run64(&c, inc(limit)) {
					admitted.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if got := admitted.Load(); got != limit || c.Load() != limit {
		t.Fatalf("admitted %d, cell %d; want %d both", got, c.Load(), limit)
	}
}

// TestRun128NoLostUpdate is the same on a 128-bit cell whose two halves must
// move together.
func TestRun128NoLostUpdate(t *testing.T) {
	const g, per, limit = 8, 5000, 20000
	var c atomic128.Uint64Pair
	var admitted atomic.Int64
	var wg sync.WaitGroup
	step := func(o1, o2 uint64) (uint64, uint64, bool, bool) {
		if o1 != ^o2 {
			t.Errorf("torn pair %x %x", o1, o2)
		}
		if o1 >= limit {
			return o1, o2, false, false
		}
		return o1 + 1, ^(o1 + 1), true, true
	}
	c.Store(0, ^uint64(0))
	for range g {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range per {
				if Run128(&c, step) {
					admitted.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if v1, _ := c.Load(); admitted.Load() != limit || v1 != limit {
		t.Fatalf("admitted %d, cell %d; want %d both", admitted.Load(), v1, limit)
	}
}

// TestDenialWritesNothing: a step that declines leaves the cell untouched
// even when its proposed next value differs.
func TestDenialWritesNothing(t *testing.T) {
	var c atomic.Uint64
	c.Store(7)
	r := Run64(&c, func(old uint64) (uint64, int, bool) { return old + 100, 1, false })
	if r != 1 || c.Load() != 7 {
		t.Fatalf("got r=%d cell=%d, want 1 and 7", r, c.Load())
	}
}

func BenchmarkRun64Inc(b *testing.B) {
	var c atomic.Uint64
	for b.Loop() {
		Run64(&c, func(old uint64) (uint64, bool, bool) { return old + 1, true, true })
	}
}

func BenchmarkHandLoopInc(b *testing.B) {
	var c atomic.Uint64
	for b.Loop() {
		for {
			old := c.Load()
			if c.CompareAndSwap(old, old+1) {
				break
			}
		}
	}
}
