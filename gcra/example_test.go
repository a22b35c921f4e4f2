package gcra_test

import (
	"fmt"
	"time"

	"github.com/cellrate/cellrate/gcra"
)

func ExampleLimiter() {
	// Four events per second, bursts of two.
	l, err := gcra.New(4, time.Second, 2)
	if err != nil {
		panic(err)
	}
	now := int64(0) // nanoseconds from any fixed origin, e.g. nanotime.Now()
	fmt.Println(l.AllowAt(now), l.AllowAt(now), l.AllowAt(now))
	r, _ := l.AllowNAt(now, 1)
	fmt.Println("retry after", time.Duration(r.RetryAfter))
	fmt.Println(l.AllowAt(now + r.RetryAfter))
	// Output:
	// true true false
	// retry after 250ms
	// true
}

func ExampleParams_Step() {
	// Step runs the same decision on a TAT kept anywhere: here a plain variable.
	ps, _ := gcra.NewParams(1, time.Second, 1)
	var s gcra.State // the zero State is a full limiter
	for _, now := range []int64{0, 5e8, 1e9} {
		next, r, _ := ps.Step(s, now, 1)
		s = next
		fmt.Println(now, r.OK, r.RetryAfter)
	}
	// Output:
	// 0 true 0
	// 500000000 false 500000000
	// 1000000000 true 0
}
