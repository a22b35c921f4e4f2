package bench

import (
	"github.com/cellrate/cellrate/bucket"
	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/striped"
)

func init() {
	register("cellrate-bucket", func(rate float64, burst int64) (limit.Limiter, error) {
		return bucket.New(rate, burst)
	})
	register("cellrate-striped", func(rate float64, burst int64) (limit.Limiter, error) {
		return striped.New(rate, burst)
	})
}
