package ulule_test

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/cellrate/cellrate/store/ulule"
	limiter "github.com/ulule/limiter/v3"
	"github.com/ulule/limiter/v3/drivers/middleware/stdlib"
)

// Keep ulule's limiter and middleware; change memory.NewStore to ulule.New.
func Example() {
	store, err := ulule.New(ulule.Options{})
	if err != nil {
		panic(err)
	}
	lim := limiter.New(store, limiter.Rate{Limit: 3, Period: time.Minute})
	_ = stdlib.NewMiddleware(lim).Handler(http.NotFoundHandler()) // serve this as before

	for range 4 {
		c, _ := lim.Get(context.Background(), "client")
		fmt.Println(c.Reached, c.Remaining)
	}
	// Output:
	// false 2
	// false 1
	// false 0
	// true 0
}
