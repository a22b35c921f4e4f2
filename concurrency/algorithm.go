package concurrency

import (
	"math"
	"time"

	"github.com/cellrate/cellrate/limit"
)

// Algorithm moves a Limiter's limit. The Limiter calls Update once per
// sampling window, from one goroutine at a time (the one whose release
// closed the window), so an Algorithm needs no synchronisation of its own;
// one value must serve one Limiter only. The Limiter clamps the result to
// its [min, max] and ignores a NaN.
type Algorithm interface {
	// Update returns the limit to use after window w, given the current
	// limit.
	Update(limit float64, w Window) float64
}

// appLimited reports whether the window's requests never came near the
// limit: then their latency says nothing about what a higher limit would
// do, and the limit holds (it would otherwise drift up without bound).
func appLimited(limit float64, w Window) bool { return float64(w.MaxInFlight)*2 < limit }

// noLoad tracks the least window-minimum latency over the last len(ring)
// windows: the latency of a request that met no queue. A service that
// becomes faster lowers it at once; one that becomes slower raises it
// after len(ring) windows.
type noLoad struct {
	ring []time.Duration
	i    int
}

func (m *noLoad) add(d time.Duration, size int) time.Duration {
	if m.ring == nil {
		m.ring = make([]time.Duration, size)
	}
	m.ring[m.i] = d
	m.i = (m.i + 1) % len(m.ring)
	best := time.Duration(math.MaxInt64)
	for _, v := range m.ring {
		if v > 0 && v < best {
			best = v
		}
	}
	return best
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
