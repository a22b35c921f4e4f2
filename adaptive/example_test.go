package adaptive_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/cellrate/cellrate/adaptive"
)

var errThrottled = errors.New("throttled locally")

func ExampleThrottle() {
	// K = 2 over a 2-minute window, as in the SRE book. Randomness is seeded
	// here so the output is fixed.
	th, err := adaptive.New(2, 2*time.Minute, adaptive.WithRand(rand.New(rand.NewPCG(1, 2)).Uint64))
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
	now := int64(time.Hour)
	for range 100 { // a healthy backend: nothing is throttled
		call(now, true)
	}
	fmt.Printf("healthy: p=%.2f\n", th.RejectProbabilityAt(now))
	throttled := 0
	for range 1000 { // the backend now refuses everything
		if call(now, false) == errThrottled {
			throttled++
		}
	}
	fmt.Printf("overloaded: p=%.2f, %d of 1000 throttled locally\n", th.RejectProbabilityAt(now), throttled)
	// Output:
	// healthy: p=0.00
	// overloaded: p=0.82, 559 of 1000 throttled locally
}
