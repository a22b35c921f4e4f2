package concurrency

// vegas is TCP Vegas's rule on a concurrency limit, as in Netflix's
// concurrency-limits: it estimates the requests queued in the service as
// limit × (1 - noLoad/latency), latency being a window's mean and noLoad
// the least such mean since the last probe (see History), and keeps that
// queue between Alpha and Beta. Below Alpha it raises the limit by the
// gap to the band's middle; above Beta it lowers it toward the middle, by
// Smoothing of the gap; a window with a Dropped request multiplies the
// limit by Backoff, and once windows show no queue again the limit climbs
// back half the way to where the back-offs began at each window (a queue
// forgets that level). A window whose requests never reached half the
// limit leaves it alone.
//
// Fields at zero take their defaults (the options document them). One
// value serves one Limiter.
type vegas struct {
	// Alpha and Beta bound the queue to keep, as fractions of the limit,
	// with floors of 1 and 2 requests (defaults 0.03 and 0.1; 0 <= Alpha
	// <= Beta <= 1).
	Alpha, Beta float64
	// Smoothing is the fraction of the way to the band a decrease goes in
	// one window (default 0.5; in (0, 1]).
	Smoothing float64
	// Backoff multiplies the limit after a window with drops (default
	// 0.9; in [0.1, 1)).
	Backoff float64
	// History is how many windows pass between probes of the no-load
	// latency (default 200; at most 1<<16). A probe halves the limit for
	// a window or a few, until the requests in flight have fallen to half.
	History int

	latencyState
}

func (v *vegas) params() (alpha, beta, smooth, backoff float64, hist int) {
	return def(v.Alpha, 0.03), def(v.Beta, 0.1), def(v.Smoothing, 0.5), def(v.Backoff, 0.9), defInt(v.History, 200)
}

func (v *vegas) check() error {
	a, b, s, k, h := v.params()
	return firstErr(fracErr("concurrency", "alpha", a, 0, 1), fracErr("concurrency", "beta", b, a, 1),
		fracErr("concurrency", "smoothing", s, 1e-9, 1), fracErr("concurrency", "backoff", k, 0.1, 1-1e-9),
		fracErr("concurrency", "history", float64(h), 1, 1<<16))
}

// update implements algorithm.
func (v *vegas) update(limit float64, w window) float64 {
	alpha, beta, smooth, backoff, hist := v.params()
	base, next, done := v.prelude(limit, w, hist, backoff)
	if done {
		return next
	}
	queue := limit * (1 - float64(base)/float64(w.AvgRTT))
	lo, hi := max(1, alpha*limit), max(2, beta*limit)
	mid := (lo + hi) / 2
	switch {
	case queue < lo:
		return v.rec.rise(limit, limit+mid-queue)
	case queue > hi:
		v.rec.forget()
		return limit - smooth*(queue-mid)
	}
	return limit
}

func def(v, d float64) float64 {
	if v == 0 {
		return d
	}
	return v
}

func defInt(v, d int) int {
	if v == 0 {
		return d
	}
	return v
}
