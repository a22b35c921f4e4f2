package packed64

import (
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
	for _, o := range opts {
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

// errCount is the ParamError of a table size below 1.
func errCount(count int) error {
	return &limit.ParamError{Pkg: "packed64", Param: "count", Value: count, Min: 1}
}
