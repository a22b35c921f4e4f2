package gcra_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cellrate/cellrate/gcra"
	"github.com/cellrate/cellrate/rate"
)

// TestFromRate: the package doc's way from x/time/rate holds decision by
// decision. rate.NewLimiter(rate.Every(d), b) and New(1, d, b) admit the
// same requests, and so do rate.NewLimiter(r, b) and NewRate(float64(r),
// b), on random schedules of times that never go back and costs up to the
// burst; SetLimit and SetRate at the same time keep them alike.
func TestFromRate(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for trial := range 200 {
		d := time.Duration(1 + rng.Int64N(int64(time.Second)))
		b := 1 + rng.IntN(20)
		var r *rate.Limiter
		var g *gcra.Limiter
		var err error
		if trial%2 == 0 {
			r = rate.NewLimiter(rate.Every(d), b)
			g, err = gcra.New(1, d, int64(b))
		} else {
			per := float64(1 + rng.IntN(1000))
			r = rate.NewLimiter(rate.Limit(per), b)
			g, err = gcra.NewRate(per, int64(b))
			d = time.Duration(float64(time.Second) / per)
		}
		if err != nil {
			t.Fatal(err)
		}
		base := time.Now() // after NewLimiter: no time given is before it
		now := int64(0)
		for i := range 300 {
			now += rng.Int64N(int64(2*d)/int64(b) + 1)
			if i == 150 && trial%2 == 1 {
				per := float64(1 + rng.IntN(1000))
				r.SetLimitAt(base.Add(time.Duration(now)), rate.Limit(per))
				if err := g.SetRateAt(now, per); err != nil {
					t.Fatal(err)
				}
			}
			n := 1 + rng.IntN(b)
			want := r.AllowN(base.Add(time.Duration(now)), n)
			res, err := g.AllowNAt(now, int64(n))
			if err != nil || res.OK != want {
				t.Fatalf("trial %d (d %v, burst %d), request %d of %d at %d ns: gcra %v %v, rate %v",
					trial, d, b, i, n, now, res.OK, err, want)
			}
		}
	}
}
