package packed64core

import (
	"math"

	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/nanotime"
)

// Option configures a Bucket, Window, Buckets or Windows.
type Option func(*config)

type config struct {
	clock nanotime.Clock
}

// WithClock makes the plain (non-At) methods read clock instead of
// nanotime.Now: for example nanotime.Since(), which follows
// testing/synctest's fake time. A nil clock is a *limit.ParamError.
func WithClock(clock nanotime.Clock) Option { return func(c *config) { c.clock = clock } }

// newConfig applies opts over the defaults.
func newConfig(opts []Option) (config, error) {
	c := config{clock: nanotime.Now}
	for i, o := range opts {
		if o == nil {
			return c, &limit.ParamError{Pkg: "packed64", Param: "option", Value: i, Reason: "a nil Option"}
		}
		o(&c)
	}
	if c.clock == nil {
		return c, &limit.ParamError{Pkg: "packed64", Param: "clock", Value: c.clock, Reason: "must not be nil"}
	}
	return c, nil
}

// paramError is the ParamError of a parameter outside [lo, hi].
func paramError(param string, value, lo, hi any) error {
	return &limit.ParamError{Pkg: "packed64", Param: param, Value: value, Min: lo, Max: hi}
}

// maxCount is the most words a table holds: 2^32 (32 GiB) where int has 64
// bits, 2^27 (1 GiB) where it has 32. A larger count is refused, not left to
// make's panic or the runtime's out-of-memory crash.
const maxCount = min(1<<32, math.MaxInt/16)

// checkCount returns the *limit.ParamError for a count out of [1, maxCount].
func checkCount(count int) error {
	if count < 1 || count > maxCount {
		return &limit.ParamError{Pkg: "packed64", Param: "count", Value: count, Min: 1, Max: maxCount}
	}
	return nil
}

// readClock reads clock, nanotime.Now for a zero value's nil clock.
func readClock(clock nanotime.Clock) int64 {
	if clock == nil {
		return nanotime.Now()
	}
	return clock()
}
