package concurrency

import "time"

// AIMD raises the limit by Increase after each window without loss in
// which requests reached at least half the limit, and multiplies it by
// Backoff after a window with loss: a Dropped request, or (with a
// Threshold) a mean latency above Threshold. It needs a loss signal the
// service gives or a latency the caller knows to be too much; Vegas and
// Gradient find the latency to keep by themselves.
//
// Fields at zero take their defaults. Use a new AIMD for each Limiter.
type AIMD struct {
	// Increase is added after a window without loss (default 1; in
	// (0, 1<<20]).
	Increase float64
	// Backoff multiplies the limit after a window with loss (default 0.9;
	// in [0.1, 1)).
	Backoff float64
	// Threshold, if not 0, makes a window whose mean latency exceeds it a
	// loss.
	Threshold time.Duration
}

func (a *AIMD) params() (inc, backoff float64) { return def(a.Increase, 1), def(a.Backoff, 0.9) }

func (a *AIMD) check() error {
	inc, k := a.params()
	return firstErr(fracErr("concurrency", "AIMD.Increase", inc, 1e-9, maxLimit), fracErr("concurrency", "AIMD.Backoff", k, 0.1, 1-1e-9),
		fracErr("concurrency", "AIMD.Threshold", float64(a.Threshold), 0, 1<<62))
}

// Update implements Algorithm.
func (a *AIMD) Update(limit float64, w Window) float64 {
	inc, backoff := a.params()
	switch {
	case w.Samples == 0:
		return limit
	case w.Drops > 0 || (a.Threshold > 0 && w.AvgRTT > a.Threshold):
		return limit * backoff
	case appLimited(limit, w):
		return limit
	}
	return limit + inc
}
