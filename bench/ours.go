package bench

import (
	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/nanotime"
)

// cellrate adapts a limit.Limiter; Allow reads nanotime.Now, as the
// limiters' own Allow methods do.
type cellrate struct{ l limit.Limiter }

func (c cellrate) Allow() bool { return c.l.AllowAt(nanotime.Now()) }

func (c cellrate) AllowNAt(now, n int64) bool {
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
