package striped_test

import (
	"fmt"
	"time"

	"github.com/cellrate/cellrate/striped"
)

func ExampleLimiter() {
	// 10 tokens a second, at most 5 at once; each P borrows 2 beyond its need.
	l, err := striped.New(10, time.Second, 5, striped.WithBatch(2))
	if err != nil {
		panic(err)
	}
	now := int64(0)
	r, _ := l.AllowNAt(now, 5)
	fmt.Println("5 at 0:", r.OK)
	r, _ = l.AllowNAt(now, 1)
	fmt.Println("6th at 0:", r.OK, "retry after", r.RetryAfter)
	fmt.Println("at 100ms:", l.AllowAt(now+int64(100*time.Millisecond)))
	// Output:
	// 5 at 0: true
	// 6th at 0: false retry after 100ms
	// at 100ms: true
}

func ExampleNew_errors() {
	_, err := striped.NewRate(100, 10, striped.WithBatch(20))
	fmt.Println(err)
	// Output: striped: batch 20 out of range [1, 10]
}

func ExampleLimiter_RemainingAt() {
	// What a request on the calling P could take: its cache's tokens plus
	// the shared bucket's (other Ps' caches are not counted).
	l, _ := striped.New(10, time.Second, 8, striped.WithBatch(3))
	fmt.Println(l.RemainingAt(0))
	l.AllowNAt(0, 8)
	fmt.Println(l.RemainingAt(0), l.RemainingAt(int64(500*time.Millisecond)))
	// Output:
	// 8
	// 0 5
}
