package stress

import (
	"math/big"
	"math/rand/v2"
	"sync/atomic"
)

// boundaryClock is a Boundary drive's time: every time is within a few ns
// (now and then up to 1/4096 or 1/16 of the period) either side of a
// boundary origin + k*period. Half the times are at the frontier, a k the
// goroutines push on by one period, now and then by two to four (a skipped
// window leaves the next one room); the other half at the goroutine's
// anchor, one to four periods behind the frontier when picked and kept for
// up to 64 of them. So stale times land just before a window's start after
// it has rotated, and pile up on one boundary over many later windows. The
// frontier wraps to 0 before its times pass 2^62.
type boundaryClock struct {
	origin, period, wrap int64
	frontier             atomic.Int64
}

// newBoundaryClock returns a clock on the subject's period, at least four
// periods after start so that lagging times stay positive.
func newBoundaryClock(s Subject, start int64) *boundaryClock {
	p := min(s.period(), maxTime/64)
	origin := start + 4*p
	return &boundaryClock{origin: origin, period: p, wrap: (maxTime-origin)/p - 1}
}

// caller returns one goroutine's source of times.
func (c *boundaryClock) caller() func(*rand.Rand) int64 {
	var anchor int64
	left := 0
	return func(r *rand.Rand) int64 {
		if r.IntN(4) == 0 {
			step := int64(1)
			if r.IntN(2) == 0 {
				step += 1 + r.Int64N(3)
			}
			c.frontier.Add(step)
		}
		b := c.frontier.Load() % c.wrap
		if left == 0 {
			anchor, left = b-1-r.Int64N(4), 1+r.IntN(64)
		}
		if r.IntN(2) == 0 {
			b = anchor
			left--
		}
		var spread int64
		switch p := r.IntN(8); {
		case p < 4:
			spread = 4
		case p < 7:
			spread = c.period>>12 + 1
		default:
			spread = c.period>>4 + 1
		}
		off := r.Int64N(spread + 1)
		if r.IntN(2) == 0 {
			off = -off
		}
		// An offset can reach past 0 or 2^62 only for the longest or
		// shortest periods.
		return min(maxTime, max(0, c.origin+b*c.period+off))
	}
}

// period is the subject's Window, or else the time its Burst takes to
// come back at Rate, rounded up; at least 1ns.
func (s Subject) period() int64 {
	if s.Window > 0 {
		return int64(s.Window)
	}
	f, _ := new(big.Rat).Quo(big.NewRat(s.Burst, 1), s.Rate).Float64()
	return clampNS(f)
}
