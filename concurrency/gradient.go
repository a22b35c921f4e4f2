package concurrency

// gradient is Gradient2's rule from Netflix's concurrency-limits (the
// limit times a latency gradient, plus a queue allowance), with the
// gradient taken against the no-load latency, as envoy's adaptive
// concurrency filter takes it: gradient = Tolerance × noLoad / latency,
// kept in [0.5, 1], latency being a window's mean and noLoad the least
// such mean since the last probe (see History). Each window the limit
// moves to limit × gradient + headroom (Headroom of the limit, at least 1
// request): at once when that is a rise, by Smoothing of the way when it
// is a fall. A window with a Dropped request multiplies the limit by
// Backoff, and once windows show no queue again the limit climbs back half
// the way to where the back-offs began at each window (a queue forgets
// that level); a window whose requests never reached half the limit
// leaves it alone.
//
// Gradient2 itself compares a short-term with a long-term average latency;
// under load that lasts, the long-term average rises to meet the short one
// and the limit creeps up with the queue. Against the no-load latency the
// fixed point is Tolerance × the service's own concurrency, plus headroom.
//
// Fields at zero take their defaults (the options document them). One
// value serves one Limiter.
type gradient struct {
	// Tolerance is how much above no-load the latency may be before the
	// limit falls (default 1; in [1, 10]).
	Tolerance float64
	// Headroom is the queue allowance, a fraction of the limit, at least
	// one request (default 0.05; in [0, 1]).
	Headroom float64
	// Smoothing is the fraction of the way a fall goes in one window
	// (default 0.5; in (0, 1]).
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

func (g *gradient) params() (tol, head, smooth, backoff float64, hist int) {
	return def(g.Tolerance, 1), def(g.Headroom, 0.05), def(g.Smoothing, 0.5), def(g.Backoff, 0.9), defInt(g.History, 200)
}

func (g *gradient) check() error {
	t, h, s, k, n := g.params()
	return firstErr(fracErr("concurrency", "tolerance", t, 1, 10), fracErr("concurrency", "headroom", h, 0, 1),
		fracErr("concurrency", "smoothing", s, 1e-9, 1), fracErr("concurrency", "backoff", k, 0.1, 1-1e-9),
		fracErr("concurrency", "history", float64(n), 1, 1<<16))
}

// update implements algorithm.
func (g *gradient) update(limit float64, w window) float64 {
	tol, head, smooth, backoff, hist := g.params()
	base, next, done := g.prelude(limit, w, hist, backoff)
	if done {
		return next
	}
	grad := min(1, max(0.5, tol*float64(base)/float64(w.AvgRTT)))
	next = limit*grad + max(1, head*limit)
	if grad < 1 {
		g.rec.forget()
	} else {
		next = g.rec.rise(limit, next)
	}
	if next < limit {
		next = limit + smooth*(next-limit)
	}
	return next
}
