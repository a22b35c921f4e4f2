package golimiter_test

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/cellrate/cellrate/store/golimiter"
	"github.com/sethvargo/go-limiter/httplimit"
)

// Keep go-limiter's middleware; change memorystore.New to golimiter.New.
func Example() {
	store, err := golimiter.New(&golimiter.Config{Tokens: 3, Interval: time.Minute})
	if err != nil {
		panic(err)
	}
	defer store.Close(context.Background())

	mw, err := httplimit.NewMiddleware(store, httplimit.IPKeyFunc())
	if err != nil {
		panic(err)
	}
	_ = mw.Handle(http.NotFoundHandler()) // serve this as before

	for range 4 {
		_, remaining, _, ok, _ := store.Take(context.Background(), "client")
		fmt.Println(ok, remaining)
	}
	// Output:
	// true 2
	// true 1
	// true 0
	// false 0
}
