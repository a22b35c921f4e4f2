package concurrency

import (
	"time"

	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/nanotime"
)

// Option configures a Limiter made by New or NewFixed.
type Option func(*config)

type config struct {
	initial, min, max int
	minWin, maxWin    time.Duration
	minN              int
	clock             nanotime.Clock
	alg               algKind
	tune              tuning
}

// algKind is the algorithm an option picked; New's default is Vegas.
type algKind uint8

const (
	algVegas algKind = iota
	algGradient
	algAIMD
)

// tuning holds the algorithms' parameters as the options gave them, 0
// taking each one's default. a and b are the picked algorithm's own pair.
type tuning struct {
	a, b               float64
	threshold          time.Duration
	backoff, smoothing float64
	history            int
	set                uint8 // which options were given: setAlg, setSmoothing, ...
}

const (
	setAlg = 1 << iota
	setBackoff
	setSmoothing
	setHistory
)

// WithLimits sets the initial limit and the range the algorithm may move
// it in (by default 10 in [1, 1000]). A Limiter holds 16 bytes per unit of
// max (a table of slots for its tokens).
func WithLimits(initial, min, max int) Option {
	return func(c *config) { c.initial, c.min, c.max = initial, min, max }
}

// WithWindow sets how long a sampling window lasts: at least minDur and
// until minSamples requests were released, at most maxDur (by default
// 1ms, 1s and 10 samples). Between its bounds a window lasts twice the
// mean latency of the window before.
func WithWindow(minDur, maxDur time.Duration, minSamples int) Option {
	return func(c *config) { c.minWin, c.maxWin, c.minN = minDur, maxDur, minSamples }
}

// WithClock makes the plain (non-At) methods read clock instead of
// nanotime.Now.
func WithClock(clock nanotime.Clock) Option { return func(c *config) { c.clock = clock } }

// WithVegas picks TCP Vegas's rule, New's default: it estimates the
// requests queued in the service from how far a window's mean latency is
// above the no-load latency, and keeps that queue between alpha and beta,
// fractions of the limit with floors of 1 and 2 requests (0 <= alpha <=
// beta <= 1; at 0, 0.03 and 0.1). Below alpha the limit rises by the gap
// to the band's middle; above beta it falls toward it (WithSmoothing).
func WithVegas(alpha, beta float64) Option { return pick(algVegas, alpha, beta, 0) }

// WithGradient picks Gradient2's rule from Netflix's concurrency-limits,
// with the gradient taken against the no-load latency as envoy's adaptive
// concurrency filter takes it: each window the limit moves to limit ×
// gradient + headroom, gradient being tolerance × no-load latency / the
// window's mean latency, kept in [0.5, 1], and headroom a fraction of the
// limit, at least 1 request. tolerance is how much above no-load the
// latency may be before the limit falls (in [1, 10]; at 0, 1), headroom
// the queue allowance (in [0, 1]; at 0, 0.05). A rise is taken at once, a
// fall by WithSmoothing of the way.
func WithGradient(tolerance, headroom float64) Option {
	return pick(algGradient, tolerance, headroom, 0)
}

// WithAIMD picks additive increase, multiplicative decrease: the limit
// rises by increase (in (0, 1<<20]; at 0, 1) after each window without
// loss in which requests reached half the limit, and is multiplied by
// WithBackoff's factor after a window with loss: a Dropped request, or,
// with a threshold above 0, a mean latency above threshold, except in the
// window right after a back-off (whose latency is mostly that of requests
// admitted before it). It needs a loss signal the service gives or a
// latency the caller knows to be too much; Vegas and Gradient find the
// latency to keep by themselves.
func WithAIMD(increase float64, threshold time.Duration) Option {
	return pick(algAIMD, increase, 0, threshold)
}

func pick(k algKind, a, b float64, threshold time.Duration) Option {
	return func(c *config) {
		c.alg, c.tune.a, c.tune.b, c.tune.threshold = k, a, b, threshold
		c.tune.set |= setAlg
	}
}

// WithBackoff sets the factor every algorithm multiplies the limit by
// after a window with a Dropped request (in [0.1, 1); at 0, 0.9). Once
// windows show no queue again, a Vegas or Gradient limit climbs back half
// the way to where the back-offs began at each window (a window with a
// queue forgets that level): a burst of timeouts from a stall does not
// mean the service became smaller.
func WithBackoff(factor float64) Option {
	return func(c *config) { c.tune.backoff, c.tune.set = factor, c.tune.set|setBackoff }
}

// WithSmoothing sets the fraction of the way to its target a fall of a
// Vegas or Gradient limit goes in one window (in (0, 1]; at 0, 0.5).
func WithSmoothing(f float64) Option {
	return func(c *config) { c.tune.smoothing, c.tune.set = f, c.tune.set|setSmoothing }
}

// WithHistory sets how many windows a Vegas or Gradient limit passes
// between probes of the no-load latency (in [1, 1<<16]; at 0, 200). A
// probe halves the limit for a window or a few, until the requests in
// flight have fallen to half.
func WithHistory(windows int) Option {
	return func(c *config) { c.tune.history, c.tune.set = windows, c.tune.set|setHistory }
}

// configure applies opts over the defaults and checks the limits, the
// window and the clock.
func configure(opts []Option) (config, error) {
	c := config{initial: 10, min: 1, max: 1000, minWin: time.Millisecond, maxWin: time.Second, minN: 10, clock: nanotime.Now}
	for i, o := range opts {
		if o == nil {
			return c, &limit.ParamError{Pkg: "concurrency", Param: "option", Value: i, Reason: "a nil Option"}
		}
		o(&c)
	}
	return c, c.check()
}

func (c *config) check() error {
	pe := func(param string, v, lo, hi any) error {
		return &limit.ParamError{Pkg: "concurrency", Param: param, Value: v, Min: lo, Max: hi}
	}
	switch {
	case c.max < 1 || c.max > maxLimit:
		return pe("max", c.max, 1, maxLimit)
	case c.min < 1 || c.min > c.max:
		return pe("min", c.min, 1, c.max)
	case c.initial < c.min || c.initial > c.max:
		return pe("initial", c.initial, c.min, c.max)
	case c.minWin <= 0:
		return pe("minDur", c.minWin, time.Duration(1), nil)
	case c.maxWin < c.minWin:
		return pe("maxDur", c.maxWin, c.minWin, nil)
	case c.minN < 1:
		return pe("minSamples", c.minN, 1, nil)
	case c.clock == nil:
		return &limit.ParamError{Pkg: "concurrency", Param: "clock", Value: nil, Reason: "the clock must not be nil"}
	}
	return nil
}

// algorithm builds the algorithm the options picked, checking its
// parameters.
func (c *config) algorithm() (algorithm, error) {
	t := c.tune
	var alg interface {
		algorithm
		check() error
	}
	switch c.alg {
	case algGradient:
		alg = &gradient{Tolerance: t.a, Headroom: t.b, Smoothing: t.smoothing, Backoff: t.backoff, History: t.history}
	case algAIMD:
		if t.set&(setSmoothing|setHistory) != 0 {
			return nil, &limit.ParamError{Pkg: "concurrency", Param: "option", Value: "WithSmoothing or WithHistory",
				Reason: "AIMD neither smooths nor probes: the option would do nothing"}
		}
		alg = &aimd{Increase: t.a, Backoff: t.backoff, Threshold: t.threshold}
	default:
		alg = &vegas{Alpha: t.a, Beta: t.b, Smoothing: t.smoothing, Backoff: t.backoff, History: t.history}
	}
	return alg, alg.check()
}
