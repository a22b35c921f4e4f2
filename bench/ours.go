package bench

import (
	"time"

	"github.com/cellrate/cellrate/bucket"
	"github.com/cellrate/cellrate/gcra"
	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/nanotime"
	"github.com/cellrate/cellrate/packed64"
	crate "github.com/cellrate/cellrate/rate"
	"github.com/cellrate/cellrate/striped"
	"github.com/cellrate/cellrate/window"
)

// cellrate's limiters, built for rate units per second with bursts of
// burst. The windows hold burst units per window of burst/rate seconds.
// packed64's limiters cannot take the admit runs: a token must take at
// least 256ns and the burst and window limit are 24 and 18 bits wide.
func init() {
	register("cellrate-bucket", func(rate float64, burst int64) (limit.Limiter, error) {
		return bucket.NewRate(rate, burst)
	})
	register("cellrate-striped", func(rate float64, burst int64) (limit.Limiter, error) {
		return striped.NewRate(rate, burst)
	})
	register("cellrate-gcra", func(rate float64, burst int64) (limit.Limiter, error) {
		return gcra.New(int64(rate), time.Second, burst)
	})
	register("cellrate-packed64-bucket", func(rate float64, burst int64) (limit.Limiter, error) {
		return packed64.NewBucket(int64(rate), time.Second, burst)
	})
	register("cellrate-packed64-window", func(rate float64, burst int64) (limit.Limiter, error) {
		return packed64.NewWindow(burst, windowOf(rate, burst))
	})
	register("cellrate-window", func(rate float64, burst int64) (limit.Limiter, error) {
		return window.New(burst, windowOf(rate, burst))
	})
	// The drop-in for x/time/rate, called exactly as the x-time-rate
	// baseline is: Allow, and AllowN with a time.Time.
	ours = append(ours, Impl{Name: "cellrate-rate", New: func(r float64, burst int64) Limiter {
		return dropin{crate.NewLimiter(crate.Limit(r), int(burst))}
	}})
}

// dropin adapts cellrate's rate.Limiter through x/time/rate's API, as
// xrate adapts x/time/rate's.
type dropin struct{ l *crate.Limiter }

func (x dropin) Allow() bool                { return x.l.Allow() }
func (x dropin) AllowNAt(now, n int64) bool { return x.l.AllowN(at(now), int(n)) }

// windowOf is the window in which burst units at rate per second fit.
func windowOf(rate float64, burst int64) time.Duration {
	return time.Duration(float64(burst) / rate * float64(time.Second))
}

// cellrate adapts a limit.Limiter; Allow reads nanotime.Now, as the
// limiters' own Allow methods do.
type cellrate struct{ l limit.Limiter }

func (c cellrate) Allow() bool { return c.l.AllowAt(nanotime.Now()) }

// AllowNAt takes the bool-only AllowAt for one unit, as x/time/rate's
// AllowN does; AllowNAt also computes Remaining and RetryAfter.
func (c cellrate) AllowNAt(now, n int64) bool {
	if n == 1 {
		return c.l.AllowAt(now)
	}
	r, _ := c.l.AllowNAt(now, n)
	return r.OK
}

// register adds one of cellrate's limiters to the comparison; runs with a
// rate and burst its constructor refuses are left out.
func register(name string, mk func(rate float64, burst int64) (limit.Limiter, error)) {
	ours = append(ours, Impl{
		Name: name,
		New: func(rate float64, burst int64) Limiter {
			l, err := mk(rate, burst)
			if err != nil {
				panic(err)
			}
			return cellrate{l}
		},
		Fits: func(rate float64, burst int64) bool {
			_, err := mk(rate, burst)
			return err == nil
		},
	})
}
