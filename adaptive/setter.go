package adaptive

import (
	"time"

	"github.com/cellrate/cellrate/bucket"
	"github.com/cellrate/cellrate/internal/ratio"
	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/rate"
)

// Setter is a limiter whose rate can change while it is in use: what an
// AIMD drives. A *gcra.Limiter is one; Bucket and Rate adapt the others.
type Setter interface {
	// SetRateAt makes perSecond events per second the limiter's rate from
	// now on.
	SetRateAt(now int64, perSecond float64) error
}

// setterFunc adapts a function to a Setter.
type setterFunc func(now int64, perSecond float64) error

// SetRateAt calls f.
func (f setterFunc) SetRateAt(now int64, perSecond float64) error { return f(now, perSecond) }

// Bucket returns a Setter for a bucket.Limiter: each rate is read as
// bucket.NewRate reads its float (the nearest fraction num/den with
// den <= 2^32), and set with SetRateAt, keeping the burst (the tokens held
// carry over). A rate with no such fraction is a *limit.ParamError.
func Bucket(l *bucket.Limiter) Setter {
	if l == nil {
		return nil // NewAIMD refuses it
	}
	return setterFunc(func(now int64, perSecond float64) error {
		num, den, ok := ratio.Fraction(perSecond)
		if !ok {
			return &limit.ParamError{Pkg: "adaptive", Param: "rate", Value: perSecond, Reason: "not a finite number of events per second in range"}
		}
		return l.SetRateAt(now, int64(num), time.Duration(den)*time.Second)
	})
}

// Rate returns a Setter for a rate.Limiter (the x/time/rate drop-in). It
// sets the limit with SetLimit, at the time of the call: a rate.Limiter
// counts time in time.Time, which now cannot be mapped to.
func Rate(l *rate.Limiter) Setter {
	if l == nil {
		return nil // NewAIMD refuses it
	}
	return setterFunc(func(_ int64, perSecond float64) error {
		l.SetLimit(rate.Limit(perSecond))
		return nil
	})
}
