// Package cell runs a pure step function on an atomic cell: one load, the
// step, and one compare-and-swap, retried after a short backoff when another
// caller changed the cell in between. It is the only place a cellrate limiter
// writes that loop.
//
// Contract: the step sees a value the cell held; its result is returned only
// when the step asked for no write (a denial writes nothing), or when the
// compare-and-swap from that value to the step's next value succeeded, so
// each returned decision is linearized at one load or one CAS. The step may
// run any number of times and must have no side effects.
package cell

import (
	"sync/atomic"

	"github.com/cellrate/cellrate/atomic128"
	"github.com/cellrate/cellrate/internal/backoff"
)

// Run64 runs step on c until it declines to write or its CAS succeeds, and
// returns the step's result of that run.
func Run64[R any](c *atomic.Uint64, step func(old uint64) (next uint64, r R, write bool)) R {
	var spin backoff.Spin
	for ; ; spin.Wait() {
		old := c.Load()
		next, r, write := step(old)
		if !write || c.CompareAndSwap(old, next) {
			return r
		}
	}
}

// Run128 is Run64 on a 128-bit cell.
func Run128[R any](c *atomic128.Uint64Pair, step func(o1, o2 uint64) (n1, n2 uint64, r R, write bool)) R {
	var spin backoff.Spin
	for ; ; spin.Wait() {
		o1, o2 := c.Load()
		n1, n2, r, write := step(o1, o2)
		if !write || c.CompareAndSwap(o1, o2, n1, n2) {
			return r
		}
	}
}
