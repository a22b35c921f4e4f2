package packed64_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/packed64"
)

func ExampleBucket() {
	// 10 tokens per second, bursts of up to 2; times are injected in ns.
	b, err := packed64.NewBucket(10, time.Second, 2)
	if err != nil {
		panic(err)
	}
	now := int64(time.Hour)
	fmt.Println(b.AllowAt(now), b.AllowAt(now), b.AllowAt(now))
	r, _ := b.AllowNAt(now, 1)
	fmt.Println(r.RetryAfter)
	r, _ = b.AllowNAt(now+int64(150*time.Millisecond), 0) // n == 0: what remains
	fmt.Println(r.Remaining)
	// Output:
	// true true false
	// 100ms
	// 1
}

func ExampleWindow() {
	// 3 units per second, in an 8-byte word.
	c, _ := packed64.NewWindow(3, time.Second)
	now := int64(time.Hour)
	fmt.Println(c.AllowAt(now), c.AllowAt(now), c.AllowAt(now), c.AllowAt(now))
	// Half a window on, half of the previous window's 3 still counts.
	r, _ := c.AllowNAt(now+int64(1500*time.Millisecond), 0)
	fmt.Println(r.Remaining)
	// Output:
	// true true true false
	// 1
}

func ExampleBuckets() {
	// One bucket per user id, 8 bytes each, all with the same parameters.
	users, _ := packed64.NewBuckets(1_000_000, 5, time.Second, 1)
	now := int64(time.Hour)
	fmt.Println(users.AllowAt(42, now), users.AllowAt(42, now), users.AllowAt(43, now))
	fmt.Println(users.AllowAt(42, now+int64(200*time.Millisecond)))
	// Output:
	// true false true
	// true
}

func ExampleWindows() {
	// One counter per client, 8 bytes each: at most 2 requests per minute.
	clients, _ := packed64.NewWindows(100_000, 2, time.Minute)
	now := int64(time.Hour)
	fmt.Println(clients.AllowAt(7, now), clients.AllowAt(7, now), clients.AllowAt(7, now), clients.AllowAt(8, now))
	r, _ := clients.AllowNAt(7, now+int64(3*time.Minute), 0) // n == 0: what remains
	fmt.Println(r.Remaining)
	// Output:
	// true true false true
	// 2
}

func ExampleWithClock() {
	// A clock of your own for the plain methods (here a fake one; in tests,
	// nanotime.Since() follows testing/synctest's virtual time).
	now := int64(time.Hour)
	b, _ := packed64.NewBucket(2, time.Second, 2, packed64.WithClock(func() int64 { return now }))
	fmt.Println(b.Allow())
	r, _ := b.AllowN(2)
	fmt.Println(r.OK, r.RetryAfter, r.Remaining)
	now += int64(time.Second)
	fmt.Println(b.Allow())
	// Output:
	// true
	// false 500ms 1
	// true
}

func ExampleNewBucket() {
	// A token must take at least 256ns to refill: errors.As names the
	// parameter and the largest value that fits the others.
	_, err := packed64.NewBucket(5_000_000, time.Second, 10)
	var pe *limit.ParamError
	if errors.As(err, &pe) {
		fmt.Println(pe.Param, pe.Value, "max", pe.Max)
	}
	fmt.Println(err)
	// Output:
	// events 5000000 max 3906250
	// packed64: events 5000000 out of range [1, 3906250]: a token must take at least 256ns to refill
}
