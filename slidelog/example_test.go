package slidelog_test

import (
	"fmt"
	"time"

	"github.com/cellrate/cellrate/slidelog"
)

func ExampleLimiter() {
	// At most 3 logins per minute, exactly: no estimate lets a 4th in.
	l, err := slidelog.New(3, time.Minute)
	if err != nil {
		panic(err)
	}
	start := int64(time.Hour) // injected times, in ns
	for _, s := range []int64{0, 10, 50, 55, 61, 69, 71} {
		r, _ := l.AllowNAt(start+s*int64(time.Second), 1)
		fmt.Printf("t=%2ds %v retry after %v\n", s, r.OK, r.RetryAfter)
	}
	// Output:
	// t= 0s true retry after 0s
	// t=10s true retry after 0s
	// t=50s true retry after 0s
	// t=55s false retry after 5s
	// t=61s true retry after 0s
	// t=69s false retry after 1s
	// t=71s true retry after 0s
}
