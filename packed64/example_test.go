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
	fmt.Printf("%.2f\n", b.TokensAt(now+int64(150*time.Millisecond)))
	// Output:
	// true true false
	// 100ms
	// 1.50
}

func ExampleWindow() {
	// 3 units per second, in an 8-byte word.
	c, _ := packed64.NewWindow(3, time.Second)
	now := int64(time.Hour)
	fmt.Println(c.AllowAt(now), c.AllowAt(now), c.AllowAt(now), c.AllowAt(now))
	fmt.Printf("%.1f\n", c.EstimateAt(now+int64(1500*time.Millisecond)))
	// Output:
	// true true true false
	// 1.5
}

func ExampleBucketParams_Step() {
	// States kept in a map, one per key, with the parameters shared. The
	// zero BucketState is a full bucket; each step returns the state to
	// keep, its Ref kept right by the step.
	p, _ := packed64.NewBucketParams(1, time.Second, 1)
	states := map[string]packed64.BucketState{}
	for i, key := range []string{"a", "b", "a"} {
		now := int64(i) * int64(time.Millisecond)
		next, r, _ := p.Step(states[key], now, 1)
		if r.OK {
			states[key] = next
		}
		fmt.Println(key, r.OK)
	}
	fmt.Println(p.RemainingAt(states["a"], int64(time.Second)))
	// Output:
	// a true
	// b true
	// a false
	// 1
}

func ExampleWindowParams_Step() {
	p, _ := packed64.NewWindowParams(2, time.Minute)
	var s packed64.WindowState // an empty counter
	for _, now := range []int64{0, 1, 2} {
		next, r, _ := p.Step(s, now, 1)
		if r.OK {
			s = next
		}
		fmt.Println(r.OK, r.Remaining)
	}
	fmt.Printf("%d left three minutes later, unit %v, wraps after %v\n", p.RemainingAt(s, int64(3*time.Minute)), p.Unit(), p.Wrap())
	// Output:
	// true 1
	// true 0
	// false 0
	// 2 left three minutes later, unit 8.388608ms, wraps after 625h29m59.813685248s
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

func ExampleHighWater() {
	// 8-byte words in a store of your own, written by several goroutines
	// whose clocks may be read at slightly different moments: keep one
	// HighWater beside the store, load the word before the mark, raise the
	// mark before writing.
	p, _ := packed64.NewWindowParams(2, time.Second)
	var (
		hw   packed64.HighWater
		word packed64.WindowWord // stands for an entry in a map or a file
	)
	for _, now := range []int64{5e9, 5e9 + 1, 5e9 - 1e6, 5e9 + 2} { // the third now is stale
		w := word
		next, r, _ := p.Step(packed64.WindowState{Word: w, Ref: hw.Ref(p.Slack())}, now, 1)
		if r.OK {
			hw.Raise(now, p.Slack())
			word = next.Word
		}
		fmt.Println(r.OK)
	}
	// Output:
	// true
	// true
	// false
	// false
}

func ExampleWindows() {
	// One counter per client, 8 bytes each: at most 2 requests per minute.
	clients, _ := packed64.NewWindows(100_000, 2, time.Minute)
	now := int64(time.Hour)
	fmt.Println(clients.AllowAt(7, now), clients.AllowAt(7, now), clients.AllowAt(7, now), clients.AllowAt(8, now))
	fmt.Printf("%.1f\n", clients.EstimateAt(7, now+int64(90*time.Second)))
	// Output:
	// true true false true
	// 1.0
}

func ExampleWithClock() {
	// A clock of your own for the plain methods (here a fake one; in tests,
	// nanotime.Since() follows testing/synctest's virtual time).
	now := int64(time.Hour)
	b, _ := packed64.NewBucket(2, time.Second, 2, packed64.WithClock(func() int64 { return now }))
	fmt.Println(b.Allow(), b.Remaining())
	r, _ := b.AllowN(2)
	fmt.Println(r.OK, r.RetryAfter)
	now += int64(time.Second)
	fmt.Println(b.Remaining(), b.Allow())
	// Output:
	// true 1
	// false 500ms
	// 2 true
}

func ExampleWindow_RemainingAt() {
	c, _ := packed64.NewWindow(4, time.Second)
	now := int64(time.Hour)
	r, _ := c.AllowNAt(now, 3)
	fmt.Println(r.OK, r.Remaining, c.RemainingAt(now))
	// Half a window on, half of the previous window's 3 still counts.
	fmt.Println(c.RemainingAt(now + int64(1500*time.Millisecond)))
	// Output:
	// true 1 1
	// 2
}

func ExampleNewBucketParams() {
	// A token must take at least 256ns to refill: errors.As names the
	// parameter and the largest value that fits the others.
	_, err := packed64.NewBucketParams(5_000_000, time.Second, 10)
	var pe *limit.ParamError
	if errors.As(err, &pe) {
		fmt.Println(pe.Param, pe.Value, "max", pe.Max)
	}
	fmt.Println(err)
	// Output:
	// events 5000000 max 3906250
	// packed64: events 5000000 out of range [1, 3906250]: a token must take at least 256ns to refill
}
