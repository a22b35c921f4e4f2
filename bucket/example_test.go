package bucket_test

import (
	"context"
	"fmt"
	"time"

	"github.com/cellrate/cellrate/bucket"
	"github.com/cellrate/cellrate/limit"
)

func ExampleLimiter() {
	// Half a token per second, bursts of two: exact, not 0.49999...
	l, err := bucket.NewRate(0.5, 2)
	if err != nil {
		panic(err)
	}
	now := int64(0) // nanoseconds from any fixed origin, e.g. nanotime.Now()
	fmt.Println(l.AllowAt(now), l.AllowAt(now), l.AllowAt(now))
	r, _ := l.AllowNAt(now, 1)
	fmt.Println("retry after", r.RetryAfter)
	// A quarter token is fine too.
	r, _ = l.AllowFracAt(now+int64(500*time.Millisecond), 1, 4)
	fmt.Println(r.OK)
	// Output:
	// true true false
	// retry after 2s
	// true
}

func ExampleReservation() {
	l, _ := bucket.New(1, time.Second, 1)
	l.AllowAt(0)
	r, _ := l.ReserveNAt(0, 1)
	fmt.Println("act in", r.Wait)
	fmt.Println("cancelled:", r.CancelAt(int64(time.Second/2)))
	fmt.Println(l.AllowAt(int64(time.Second)))
	// Output:
	// act in 1s
	// cancelled: true
	// true
}

func ExampleLimiter_Wait() {
	l, _ := bucket.New(1, time.Hour, 1)
	l.Allow()
	// The next token is an hour away: a context with a sooner deadline
	// returns at once instead of blocking.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	fmt.Println(l.Wait(ctx))
	// Output:
	// bucket: wait would pass the context deadline: context deadline exceeded
}

func ExampleWithClock() {
	// A clock the test controls; nanotime.Since() is the one that follows
	// testing/synctest's fake time.
	var fake int64
	l, _ := bucket.New(1, time.Second, 1, bucket.WithClock(func() int64 { return fake }))
	fmt.Println(l.Allow(), l.Allow())
	fake += int64(time.Second)
	fmt.Println(l.Allow())
	// Output:
	// true false
	// true
}

func ExampleNew() {
	// 3 tokens per second, bursts of 5; errors name the parameter refused.
	l, _ := bucket.New(3, time.Second, 5)
	r, _ := l.AllowNAt(0, 5)
	later, _ := l.AllowNAt(int64(time.Second), 0) // n == 0: what is left
	fmt.Println(r.OK, r.Remaining, later.Remaining)
	_, err := bucket.New(3, 0, 5)
	fmt.Println(err)
	// Output:
	// true 0 3
	// bucket: period 0s out of range (must be >= 1ns)
}

func ExampleLimiter_SetRateAt() {
	l, _ := bucket.New(1, time.Second, 10)
	l.AllowNAt(0, 10)
	// From 1s on, 10 per second: the token refilled by then carries over.
	_ = l.SetRateAt(int64(time.Second), 10, time.Second)
	at1, _ := l.AllowNAt(int64(time.Second), 0) // n == 0: what is left
	at2, _ := l.AllowNAt(int64(2*time.Second), 0)
	fmt.Println(at1.Remaining, at2.Remaining)
	// Output:
	// 1 10
}

func ExampleLimiter_TakeAt() {
	// A per-key bucket and a global one, all or nothing: when the global
	// bucket denies, All refunds the per-key bucket at once.
	perKey, _ := bucket.New(5, time.Second, 5)
	global, _ := bucket.New(100, time.Second, 3)
	both, _ := limit.NewAll(perKey, global)
	left := func() (int64, int64) {
		k, _ := perKey.AllowNAt(0, 0) // n == 0: what is left
		g, _ := global.AllowNAt(0, 0)
		return k.Remaining, g.Remaining
	}
	r, _ := both.AllowNAt(0, 3)
	k, g := left()
	fmt.Println(r.OK, k, g)
	r, _ = both.AllowNAt(0, 2) // the global bucket is empty: nothing kept
	k, g = left()
	fmt.Println(r.OK, k, g)
	// Output:
	// true 2 0
	// false 2 0
}
