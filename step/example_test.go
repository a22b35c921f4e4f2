package step_test

import (
	"fmt"
	"time"

	"github.com/cellrate/cellrate/step"
)

func ExampleGCRA_Step() {
	// The same decision as a gcra.Limiter's, on a state kept anywhere: here
	// a plain variable, one request a second with bursts of 1.
	g, _ := step.NewGCRA(1, time.Second, 1)
	var s step.GCRAState // the zero state is a full limiter
	for _, now := range []int64{0, 5e8, 1e9} {
		next, r, _ := g.Step(s, now, 1)
		s = next // a denial returns s unchanged: storing it is optional
		fmt.Println(now, r.OK, r.RetryAfter)
	}
	// Output:
	// 0 true 0s
	// 500000000 false 500ms
	// 1000000000 true 0s
}
