package adaptive_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/cellrate/cellrate/adaptive"
	"github.com/cellrate/cellrate/bucket"
)

var errThrottled = errors.New("throttled locally")

func ExampleThrottle() {
	// K = 2 over a 2-minute window, as in the SRE book. Randomness is seeded
	// here so the output is fixed.
	now := int64(time.Hour)
	th, err := adaptive.New(2, 2*time.Minute, adaptive.WithRand(rand.New(rand.NewPCG(1, 2)).Uint64),
		adaptive.WithClock(func() int64 { return now }))
	if err != nil {
		panic(err)
	}
	call := func(now int64, backendOK bool) error {
		if !th.AllowAt(now) {
			return errThrottled // never sent: the backend spends nothing on it
		}
		if !backendOK {
			return errors.New("overloaded")
		}
		th.AcceptedAt(now)
		return nil
	}
	for range 100 { // a healthy backend: nothing is throttled
		call(now, true)
	}
	fmt.Printf("healthy: p=%.2f\n", th.RejectProbability())
	throttled := 0
	for range 1000 { // the backend now refuses everything
		if call(now, false) == errThrottled {
			throttled++
		}
	}
	fmt.Printf("overloaded: p=%.2f, %d of 1000 throttled locally\n", th.RejectProbability(), throttled)
	// Output:
	// healthy: p=0.00
	// overloaded: p=0.82, 559 of 1000 throttled locally
}

// An AIMD drives a token bucket's rate from what the downstream answers.
// The downstream here fails whenever it is sent more than 65 requests per
// second; times are injected, so the output is fixed.
func ExampleAIMD() {
	b, err := bucket.New(50, time.Second, 10)
	if err != nil {
		panic(err)
	}
	start := func() int64 { return 0 }
	a, err := adaptive.NewAIMD(adaptive.Bucket(b), 50, 5, 1000, 10, 0.5,
		adaptive.WithInterval(time.Second), adaptive.WithClock(start))
	if err != nil {
		panic(err)
	}
	for sec := int64(0); sec < 8; sec++ {
		now := sec * int64(time.Second)
		ok := a.Rate() <= 65 // the downstream's answer to this second's traffic
		a.RecordAt(now, ok)  // judges the second before, then counts this one
		// a.Rate() is the rate a has just set on b.
		fmt.Printf("t=%ds healthy=%t bucket at %.0f/s\n", sec, ok, a.Rate())
	}
	// Output:
	// t=0s healthy=true bucket at 50/s
	// t=1s healthy=true bucket at 60/s
	// t=2s healthy=true bucket at 70/s
	// t=3s healthy=false bucket at 80/s
	// t=4s healthy=false bucket at 40/s
	// t=5s healthy=true bucket at 20/s
	// t=6s healthy=true bucket at 30/s
	// t=7s healthy=true bucket at 40/s
}
