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

func ExamplePackedBucket_Step() {
	// States kept in a map, one per key, with the parameters shared. The
	// zero state is a full bucket; each step returns the state to keep, its
	// Ref kept right by the step.
	p, _ := step.NewPackedBucket(1, time.Second, 1)
	states := map[string]step.PackedBucketState{}
	for i, key := range []string{"a", "b", "a"} {
		now := int64(i) * int64(time.Millisecond)
		next, r, _ := p.Step(states[key], now, 1)
		if r.OK {
			states[key] = next
		}
		fmt.Println(key, r.OK, r.RetryAfter)
	}
	// Output:
	// a true 0s
	// b true 0s
	// a false 998ms
}

func ExamplePackedWindow_Step() {
	p, _ := step.NewPackedWindow(2, time.Minute)
	var s step.PackedWindowState // an empty counter
	for _, now := range []int64{0, 1, 2, int64(3 * time.Minute)} {
		next, r, _ := p.Step(s, now, 1)
		if r.OK {
			s = next
		}
		fmt.Println(r.OK, r.Remaining)
	}
	fmt.Println("unit", p.Unit())
	// Output:
	// true 1
	// true 0
	// false 0
	// true 1
	// unit 8.388608ms
}

func ExampleHighWater() {
	// 8-byte words in a store of your own, written by several goroutines
	// whose clocks may be read at slightly different moments: keep one
	// HighWater beside the store, load the word before the mark, raise the
	// mark before writing.
	p, _ := step.NewPackedWindow(2, time.Second)
	var (
		hw   step.HighWater
		word uint64 // stands for an entry in a map or a file
	)
	for _, now := range []int64{5e9, 5e9 + 1, 5e9 - 1e6, 5e9 + 2} { // the third now is stale
		w := word
		next, r, _ := p.Step(step.PackedWindowState{Word: w, Ref: hw.Ref(p.Slack())}, now, 1)
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

func ExampleBucket_TakeUpTo() {
	// A batch borrowed from a bucket kept anywhere: up to 8 tokens from a
	// full bucket of 10 at 1 a second, then what is left at 0 and at 3s.
	b, _ := step.NewBucket(1, time.Second, 10)
	var s step.BucketState // the zero state is a full bucket
	s, n := b.TakeUpTo(s, 0, 8)
	_, now, _ := b.Step(s, 0, 0) // n == 0 takes nothing: what is left
	_, later, _ := b.Step(s, int64(3*time.Second), 0)
	fmt.Println(n, now.Remaining, later.Remaining)
	// Output:
	// 8 2 5
}
