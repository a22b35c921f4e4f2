package bench

import (
	"time"

	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/packed64"
)

// packed64's limiters cannot take the admit runs: a token must take at
// least 256ns and the burst and window limit are 24 and 18 bits wide.
func init() {
	register("cellrate-packed64-bucket", func(rate float64, burst int64) (limit.Limiter, error) {
		return packed64.NewBucket(int64(rate), time.Second, burst)
	})
	register("cellrate-packed64-window", func(rate float64, burst int64) (limit.Limiter, error) {
		return packed64.NewWindow(burst, time.Duration(float64(burst)/rate*float64(time.Second)))
	})
}
