package window_test

import (
	"fmt"
	"time"

	"github.com/cellrate/cellrate/window"
)

func ExampleLimiter() {
	// 3 requests per second; times are injected in nanoseconds.
	l, err := window.New(3, time.Second)
	if err != nil {
		panic(err)
	}
	start := int64(time.Hour)
	for i := range 4 {
		fmt.Println(l.AllowAt(start + int64(i)*int64(time.Millisecond)))
	}
	// Half a window later, half of the previous window's 3 still counts.
	r, _ := l.AllowNAt(start+int64(1500*time.Millisecond), 1)
	fmt.Printf("%+v estimate %.1f\n", r, l.EstimateAt(start+int64(1500*time.Millisecond)))
	// Output:
	// true
	// true
	// true
	// false
	// {OK:true Remaining:0 RetryAfter:0s} estimate 2.5
}

func ExampleParams_Step() {
	// The step runs on any copy of the state: here a plain variable. With
	// 2 admitted in this window, one more fits once half of the next has passed.
	p, _ := window.NewParams(2, time.Minute)
	var s window.State
	for _, now := range []int64{0, 1, 2} {
		next, r, _ := p.Step(s, now, 1)
		if r.OK {
			s = next
		}
		fmt.Printf("%v retry in %v\n", r.OK, r.RetryAfter)
	}
	start, counts := window.Pack(s)
	fmt.Println(window.Unpack(start, counts) == s)
	// Output:
	// true retry in 0s
	// true retry in 0s
	// false retry in 1m29.999999998s
	// true
}

func ExampleUnpack() {
	// A State can be stored anywhere as its two words and read back.
	s := window.State{Start: 1_000, Prev: 7, Cur: 2}
	start, counts := window.Pack(s)
	fmt.Printf("%d %#x %+v\n", start, counts, window.Unpack(start, counts))
	// Output:
	// 1000 0x700000002 {Start:1000 Prev:7 Cur:2}
}

func ExampleWithClock() {
	// The plain methods read the injected clock.
	now := int64(0)
	l, _ := window.New(2, time.Second, window.WithClock(func() int64 { return now }))
	fmt.Println(l.Allow(), l.Allow(), l.Allow(), l.Remaining())
	now += int64(1500 * time.Millisecond) // half of the last window still counts
	fmt.Println(l.Remaining())
	// Output:
	// true true false 0
	// 1
}
