package packed64

import (
	"github.com/cellrate/cellrate/internal/packed64core"
	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/nanotime"
)

// Option configures a Bucket, Window, Buckets or Windows.
type Option func(*config)

type config struct {
	clock    nanotime.Clock
	setClock bool
}

// WithClock makes the plain (non-At) methods read clock instead of
// nanotime.Now: for example nanotime.Since(), which follows
// testing/synctest's fake time. A nil clock is a *limit.ParamError.
func WithClock(clock nanotime.Clock) Option {
	return func(c *config) { c.clock, c.setClock = clock, true }
}

// core turns opts into the implementation's options.
func core(opts []Option) ([]packed64core.Option, error) {
	var c config
	for i, o := range opts {
		if o == nil {
			return nil, &limit.ParamError{Pkg: "packed64", Param: "option", Value: i, Reason: "a nil Option"}
		}
		o(&c)
	}
	if !c.setClock {
		return nil, nil
	}
	return []packed64core.Option{packed64core.WithClock(c.clock)}, nil
}
