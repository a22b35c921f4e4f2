package packed64_test

import (
	"fmt"
	"time"

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
	fmt.Println(time.Duration(r.RetryAfter))
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
	// Words kept in a map, one per key, with the parameters shared. Times
	// here never go backwards, so each step's own now serves as ref.
	p, _ := packed64.NewBucketParams(1, time.Second, 1, 0)
	words := map[string]packed64.BucketWord{}
	for i, key := range []string{"a", "b", "a"} {
		now := int64(i) * int64(time.Millisecond)
		next, r, _ := p.Step(words[key], now, now, 1)
		if r.OK {
			words[key] = next
		}
		fmt.Println(key, r.OK)
	}
	fmt.Printf("%+v\n", packed64.UnpackBucket(words["a"]))
	// Output:
	// a true
	// b true
	// a false
	// {Time:0 Deficit:15625000}
}

func ExampleWindowParams_Step() {
	p, _ := packed64.NewWindowParams(2, time.Minute, 0)
	var w packed64.WindowWord
	for _, now := range []int64{0, 1, 2} {
		next, r, _ := p.Step(w, now, now, 1)
		if r.OK {
			w = next
		}
		fmt.Println(r.OK, r.Remaining)
	}
	fmt.Printf("%+v, unit %v, wraps after %v\n", packed64.UnpackWindow(w), p.Unit(), p.Wrap())
	// Output:
	// true 1
	// true 0
	// false 0
	// {Start:0 Prev:0 Cur:2}, unit 8.388608ms, wraps after 625h29m59.813685248s
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

func ExamplePackBucket() {
	w := packed64.PackBucket(packed64.BucketState{Time: 5, Deficit: 3})
	fmt.Printf("%#x %+v\n", uint64(w), packed64.UnpackBucket(w))
	// Output:
	// 0x5000003 {Time:5 Deficit:3}
}

func ExamplePackWindow() {
	w := packed64.PackWindow(packed64.WindowState{Start: 1, Prev: 2, Cur: 3})
	fmt.Printf("%#x %+v\n", uint64(w), packed64.UnpackWindow(w))
	// Output:
	// 0x1000080003 {Start:1 Prev:2 Cur:3}
}

func ExampleHighWater() {
	// Words in a store of your own, written by several goroutines whose
	// clocks may be read at slightly different moments: keep one HighWater
	// beside the store, load the word before the mark, raise the mark
	// before writing.
	p, _ := packed64.NewWindowParams(2, time.Second, 0)
	var (
		hw   packed64.HighWater
		word packed64.WindowWord // stands for an entry in a map or a file
	)
	for _, now := range []int64{5e9, 5e9 + 1, 5e9 - 1e6, 5e9 + 2} { // the third now is stale
		w := word
		next, r, _ := p.Step(w, now, hw.Ref(p.Slack()), 1)
		if r.OK {
			hw.Raise(now, p.Slack())
			word = next
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
