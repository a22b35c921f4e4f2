package bench

import (
	"time"

	"github.com/cellrate/cellrate/gcra"
	"github.com/cellrate/cellrate/limit"
)

func init() {
	register("cellrate-gcra", func(rate float64, burst int64) (limit.Limiter, error) {
		return gcra.New(int64(rate), time.Second, burst)
	})
}
