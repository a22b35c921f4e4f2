package rate_test

import (
	"context"
	"fmt"
	"time"

	"github.com/cellrate/cellrate/rate" // was: "golang.org/x/time/rate"
)

func ExampleLimiter() {
	// 10 events per second, bursts of 2; times passed explicitly.
	l := rate.NewLimiter(rate.Every(100*time.Millisecond), 2)
	start := time.Now()
	fmt.Println(l.AllowN(start, 1), l.AllowN(start, 1), l.AllowN(start, 1))
	fmt.Println(l.AllowN(start.Add(99*time.Millisecond), 1), l.AllowN(start.Add(100*time.Millisecond), 1))
	// Output:
	// true true false
	// false true
}

func ExampleLimiter_Wait() {
	l := rate.NewLimiter(1, 1) // one per second
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	fmt.Println(l.Wait(ctx)) // the burst: at once
	fmt.Println(l.Wait(ctx)) // a second away, past the deadline: fails at once
	// Output:
	// <nil>
	// rate: Wait(n=1) would exceed context deadline
}

func ExampleReservation() {
	l := rate.NewLimiter(2, 1) // a token every 500ms
	now := time.Now()
	l.AllowN(now, 1)
	r := l.ReserveN(now, 1)
	fmt.Println(r.OK(), r.DelayFrom(now))
	// The holder will not act: the token goes back, since nothing else
	// was decided on the limiter since.
	r.CancelAt(now)
	fmt.Println(l.AllowN(now.Add(500*time.Millisecond), 1))
	// Output:
	// true 500ms
	// true
}

func ExampleLimiter_SetLimit() {
	// A zero limit pauses the refill; tokens carry over both ways.
	l := rate.NewLimiter(10, 3)
	now := time.Now()
	l.AllowN(now, 3)
	l.SetLimitAt(now.Add(250*time.Millisecond), 0) // 2.5 tokens, kept
	fmt.Println(l.TokensAt(now.Add(time.Hour)))
	l.SetLimitAt(now.Add(time.Hour), 10)
	fmt.Println(l.TokensAt(now.Add(time.Hour + 50*time.Millisecond)))
	// Output:
	// 2.5
	// 3
}

func ExampleSometimes() {
	s := rate.Sometimes{First: 2, Every: 3}
	for i := range 7 {
		s.Do(func() { fmt.Print(i, " ") })
	}
	fmt.Println()
	// Output:
	// 0 1 3 6
}
