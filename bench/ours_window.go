package bench

import (
	"time"

	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/window"
)

// The window limiter holds burst units per window of burst/rate seconds.
func init() {
	register("cellrate-window", func(rate float64, burst int64) (limit.Limiter, error) {
		return window.New(burst, time.Duration(float64(burst)/rate*float64(time.Second)))
	})
}
