package adaptive

import (
	"github.com/cellrate/cellrate/bucket"
	"github.com/cellrate/cellrate/rate"
)

// Setter is a limiter whose rate can change while it is in use: what an
// AIMD drives. A *gcra.Limiter is one; Bucket and Rate adapt the others.
type Setter interface {
	// SetRateAt makes perSecond events per second the limiter's rate from
	// now on.
	SetRateAt(now int64, perSecond float64) error
}

// SetterFunc adapts a function to a Setter.
type SetterFunc func(now int64, perSecond float64) error

// SetRateAt calls f.
func (f SetterFunc) SetRateAt(now int64, perSecond float64) error { return f(now, perSecond) }

// Bucket returns a Setter for a bucket.Limiter: each rate is read as
// bucket.RateParams reads it, with the bucket's current burst, and set
// with SetParamsAt (the tokens held carry over).
func Bucket(l *bucket.Limiter) Setter {
	return SetterFunc(func(now int64, perSecond float64) error {
		ps, err := bucket.RateParams(perSecond, l.Params().Burst())
		if err != nil {
			return err
		}
		return l.SetParamsAt(now, ps)
	})
}

// Rate returns a Setter for a rate.Limiter (the x/time/rate drop-in). It
// sets the limit with SetLimit, at the time of the call: a rate.Limiter
// counts time in time.Time, which now cannot be mapped to.
func Rate(l *rate.Limiter) Setter {
	return SetterFunc(func(_ int64, perSecond float64) error {
		l.SetLimit(rate.Limit(perSecond))
		return nil
	})
}
