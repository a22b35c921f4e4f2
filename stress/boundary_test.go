package stress

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestBoundaryClock: the boundary clock's times stay in [0, 2^62] for
// periods from 1ns to beyond 2^62 (whose frontier wraps at once), and
// most of them are within a few ns of a boundary.
func TestBoundaryClock(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, w := range []time.Duration{1, time.Second, 1<<63 - 1} {
		c := newBoundaryClock(Subject{Window: w}, 1e9)
		next := c.caller()
		near := 0
		const n = 1_000_000
		for range n {
			now := next(r)
			if now < 0 || now > maxTime {
				t.Fatalf("window %d: time %d", w, now)
			}
			if d := ((now-c.origin)%c.period + c.period) % c.period; d <= 4 || c.period-d <= 4 {
				near++
			}
		}
		if near < 2*n/5 {
			t.Errorf("window %d: %d of %d times within 4ns of a boundary", w, near, n)
		}
	}
}
