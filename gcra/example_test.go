package gcra_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cellrate/cellrate/gcra"
	"github.com/cellrate/cellrate/limit"
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
	fmt.Println("retry after", r.RetryAfter)
	fmt.Println(l.AllowAt(now + int64(r.RetryAfter)))
	// Output:
	// true true false
	// retry after 250ms
	// true
}

func ExampleLimiter_ReserveAt() {
	// Reserve takes events now and says when to use them: here the burst
	// of 2 is spent, so each next event waits one more interval (250ms).
	l, _ := gcra.New(4, time.Second, 2)
	for range 4 {
		r, _ := l.ReserveAt(0)
		fmt.Println(r.OK, r.Wait)
	}
	// A reservation nothing was built on can be cancelled.
	r, _ := l.ReserveAt(0)
	fmt.Println(r.CancelAt(0), l.RemainingAt(int64(750*time.Millisecond)))
	// Output:
	// true 0s
	// true 0s
	// true 250ms
	// true 500ms
	// true 1
}

func ExampleNewRate() {
	// 0.5 events per second is read as 1 event per 2 seconds, exactly. The
	// clock is injected: Allow reads it.
	now := int64(0)
	l, err := gcra.NewRate(0.5, 1, gcra.WithClock(func() int64 { return now }))
	if err != nil {
		panic(err)
	}
	r, _ := l.AllowN(1)
	fmt.Println(l.Allow(), r.OK, r.RetryAfter)
	now += int64(2 * time.Second)
	fmt.Println(l.Allow(), l.Tokens())
	// Output:
	// false true 0s
	// true 0
}

func ExampleNew_paramError() {
	// A parameter out of range is a *limit.ParamError: errors.As gives the
	// parameter and the largest value that fits.
	_, err := gcra.New(1, 1<<61, 3)
	var pe *limit.ParamError
	if errors.As(err, &pe) {
		fmt.Println(pe.Param, pe.Value, "max", pe.Max)
	}
	// Output:
	// burst 3 max 2
}

func ExampleLimiter_Wait() {
	// One event an hour: the first Wait returns at once; the next one is an
	// hour away, past ctx's deadline, so WaitN fails at once instead of
	// sleeping until the deadline.
	l, _ := gcra.New(1, time.Hour, 1)
	fmt.Println(l.Wait(context.Background()))
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := l.WaitN(ctx, 1)
	fmt.Println(errors.Is(err, gcra.ErrDeadline), errors.Is(err, context.DeadlineExceeded))
	// Output:
	// <nil>
	// true true
}
