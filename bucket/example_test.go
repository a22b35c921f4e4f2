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
	r, _ := l.ReserveAt(0)
	fmt.Println("act in", r.Wait)
	fmt.Println("cancelled:", r.CancelAt(int64(time.Second/2)))
	fmt.Println(l.AllowAt(int64(time.Second)))
	// Output:
	// act in 1s
	// cancelled: true
	// true
}

func ExampleLoan() {
	// A shard borrows a batch, serves what it can, returns the rest at once.
	l, _ := bucket.New(100, time.Second, 10)
	loan := l.TakeUpToAt(0, 8)
	fmt.Println("borrowed", loan.N)
	units := l.GiveBack(&loan, 5)
	p := l.Params()
	fmt.Println("gave back", units/p.Unit(), "tokens; left", l.TokensAt(0))
	// Output:
	// borrowed 8
	// gave back 5 tokens; left 7
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

func ExampleState() {
	// Step runs the same decision on a State kept anywhere.
	ps, _ := bucket.NewParams(1, time.Second, 1)
	var s bucket.State // the zero State is a full bucket
	for _, now := range []int64{0, 5e8, 1e9} {
		next, r, _ := ps.Step(s, now, 1)
		s = next
		fmt.Println(now, r.OK, r.RetryAfter)
	}
	// Output:
	// 0 true 0s
	// 500000000 false 500ms
	// 1000000000 true 0s
}

func ExampleParams() {
	// 3 tokens per second: a token is 1e9 units, the bucket refills 3
	// units/ns, so a third of a token a second is exact, with no drift.
	ps, _ := bucket.NewParams(3, time.Second, 5)
	events, period := ps.Rate()
	fmt.Println(ps.Unit(), events, period, ps.Burst())
	// Output:
	// 1000000000 3 1s 5
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
	fmt.Println(r.OK, l.RemainingAt(0), l.RemainingAt(int64(time.Second)))
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
	fmt.Println(l.RemainingAt(int64(time.Second)), l.RemainingAt(int64(2*time.Second)))
	// Output:
	// 1 10
}

func ExampleParams_TakeUpTo() {
	// A batch borrowed as a pure step on a State kept anywhere: up to 8
	// tokens from a full bucket of 10.
	ps, _ := bucket.NewParams(1, time.Second, 10)
	var s bucket.State
	s, n := ps.TakeUpTo(s, 0, 8)
	fmt.Println(n, ps.Remaining(s, 0), ps.Remaining(s, int64(3*time.Second)))
	// Output:
	// 8 2 5
}

func ExampleLimiter_TakeAt() {
	// A per-key bucket and a global one, all or nothing: when the global
	// bucket denies, All refunds the per-key bucket at once.
	perKey, _ := bucket.New(5, time.Second, 5)
	global, _ := bucket.New(100, time.Second, 3)
	both, _ := limit.NewAll(perKey, global)
	r, _ := both.AllowNAt(0, 3)
	fmt.Println(r.OK, perKey.RemainingAt(0), global.RemainingAt(0))
	r, _ = both.AllowNAt(0, 2) // the global bucket is empty: nothing kept
	fmt.Println(r.OK, perKey.RemainingAt(0), global.RemainingAt(0))
	// Output:
	// true 2 0
	// false 2 0
}
