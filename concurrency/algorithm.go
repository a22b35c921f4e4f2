package concurrency

import (
	"time"

	"github.com/cellrate/cellrate/limit"
)

// algorithm moves a Limiter's limit. The Limiter calls update once per
// sampling window, from one goroutine at a time (the one whose release
// closed the window), so an algorithm needs no synchronisation of its own;
// one value must serve one Limiter only. The Limiter clamps the result to
// its [min, max] and ignores a NaN.
type algorithm interface {
	// update returns the limit to use after window w, given the current
	// limit.
	update(limit float64, w window) float64
}

// appLimited reports whether the window's requests never came near the
// limit: then their latency says nothing about what a higher limit would
// do, and the limit holds (it would otherwise drift up without bound).
func appLimited(limit float64, w window) bool { return float64(w.MaxInFlight)*2 < limit }

// noLoad tracks the no-load latency: the least window-mean latency since
// the last probe. The mean, not the minimum: a window's mean is what the
// algorithms compare with it, and on a service whose latency jitters the
// least single latency lies below every window's mean, which would read
// the jitter as a queue and hold the limit below the service's
// concurrency. A service that becomes faster lowers it at once.
// One that becomes slower would leave it too low for good (the limit then
// too low) and, had it simply expired, would let the queue's latency pass
// for no-load (the limit then creeping up each time it expired); instead,
// every History windows, a probe halves the limit until a window's
// requests all saw at most that many in flight, takes that window's mean
// latency as the new no-load latency, and restores the limit.
type noLoad struct {
	base    time.Duration
	windows int
	probing int     // windows spent in the current probe, 0 when none
	saved   float64 // the limit before the probe
}

// maxProbe is how many windows a probe waits for in-flight requests to
// fall to half the limit before it gives up and restores the limit.
const maxProbe = 8

// step feeds one window. It returns the no-load latency, and a limit to
// use instead of the algorithm's (ok true) while a probe runs or ends.
func (m *noLoad) step(limit float64, w window, history int) (base time.Duration, next float64, ok bool) {
	if m.probing > 0 {
		m.probing++
		half := max(1, m.saved/2)
		if float64(w.MaxInFlight) <= half || m.probing > maxProbe {
			if float64(w.MaxInFlight) <= half {
				m.base = w.AvgRTT
			}
			m.probing, m.windows = 0, 0
			return m.base, m.saved, true
		}
		return m.base, half, true
	}
	if m.base == 0 || w.AvgRTT < m.base {
		m.base = w.AvgRTT
	}
	if m.windows++; m.windows >= history {
		m.probing, m.saved = 1, limit
		return m.base, max(1, limit/2), true
	}
	return m.base, 0, false
}

// recovery remembers the limit a run of back-offs on drops started from,
// so that once windows show no queue again the limit climbs back half the
// way at each window instead of by one step: a burst of timeouts from a
// stall (of the host, of the network) does not mean the service became
// smaller. A window whose latency shows a queue forgets it: that level
// was too much.
type recovery struct{ from float64 }

func (r *recovery) backoff(limit, factor float64) float64 {
	r.from = max(r.from, limit)
	return limit * factor
}

// rise returns the limit after a window without queue, whose own rule
// gives next.
func (r *recovery) rise(limit, next float64) float64 {
	if r.from > next {
		next = max(next, limit+(r.from-limit)/2)
	}
	if r.from-next < 1 {
		r.from = 0
	}
	return next
}

func (r *recovery) forget() { r.from = 0 }

// latencyState is what the latency-based algorithms (vegas, gradient) keep
// between windows.
type latencyState struct {
	base noLoad
	rec  recovery
}

// prelude decides the windows a latency rule must not read: an empty one,
// one during a no-load probe, one with drops (back off), and one whose
// requests never neared the limit (hold). Otherwise it returns the no-load
// latency for the rule, and done false.
func (s *latencyState) prelude(limit float64, w window, hist int, backoff float64) (base time.Duration, next float64, done bool) {
	if w.Samples == 0 {
		return 0, limit, true
	}
	base, probe, ok := s.base.step(limit, w, hist)
	switch {
	case ok:
		return base, probe, true
	case w.Drops > 0:
		return base, s.rec.backoff(limit, backoff), true
	case appLimited(limit, w) || w.AvgRTT <= 0:
		return base, limit, true
	}
	return base, limit, false
}

func fracErr(pkg, param string, v, lo, hi float64) error {
	if v >= lo && v <= hi {
		return nil
	}
	return &limit.ParamError{Pkg: pkg, Param: param, Value: v, Min: lo, Max: hi}
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
