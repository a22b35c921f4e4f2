package concurrency

import "time"

// aimd raises the limit by Increase after each window without loss in
// which requests reached at least half the limit, and multiplies it by
// Backoff after a window with loss: a Dropped request, or (with a
// Threshold) a mean latency above Threshold, except in the window right
// after a back-off, whose latency is mostly that of requests admitted
// before it (the limit then holds). It needs a loss
// signal the service gives or a latency the caller knows to be too much;
// Vegas and Gradient find the latency to keep by themselves.
//
// Fields at zero take their defaults (the options document them). One
// value serves one Limiter.
type aimd struct {
	// Increase is added after a window without loss (default 1; in
	// (0, 1<<20]).
	Increase float64
	// Backoff multiplies the limit after a window with loss (default 0.9;
	// in [0.1, 1)).
	Backoff float64
	// Threshold, if not 0, makes a window whose mean latency exceeds it a
	// loss.
	Threshold time.Duration

	backedOff bool // the last window backed off
}

func (a *aimd) params() (inc, backoff float64) { return def(a.Increase, 1), def(a.Backoff, 0.9) }

func (a *aimd) check() error {
	inc, k := a.params()
	return firstErr(fracErr("concurrency", "increase", inc, 1e-9, maxLimit), fracErr("concurrency", "backoff", k, 0.1, 1-1e-9),
		fracErr("concurrency", "threshold", float64(a.Threshold), 0, 1<<62))
}

// update implements algorithm.
func (a *aimd) update(limit float64, w window) float64 {
	inc, backoff := a.params()
	slow := a.Threshold > 0 && w.AvgRTT > a.Threshold
	switch {
	case w.Samples == 0:
		return limit
	case w.Drops > 0 || slow && !a.backedOff:
		a.backedOff = true
		return limit * backoff
	case slow:
		a.backedOff = false
		return limit // the window after a back-off: its latency is the old limit's
	}
	a.backedOff = false
	if appLimited(limit, w) {
		return limit
	}
	return limit + inc
}
