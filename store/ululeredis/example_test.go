package ululeredis_test

import (
	"context"
	"fmt"
	"time"

	"github.com/cellrate/cellrate/store/ululeredis"
	goredis "github.com/redis/go-redis/v9"
	limiter "github.com/ulule/limiter/v3"
)

// Keep ulule's limiter and middleware; change the Redis store.
func Example() {
	client := goredis.NewClient(&goredis.Options{Addr: redisAddr})
	defer client.Close()
	store, err := ululeredis.New(client, ululeredis.Options{Prefix: fmt.Sprint("example", time.Now().UnixNano())})
	if err != nil {
		panic(err)
	}
	lim := limiter.New(store, limiter.Rate{Limit: 3, Period: time.Minute})
	for range 4 {
		c, err := lim.Get(context.Background(), "client")
		fmt.Println(c.Reached, c.Remaining, err)
	}
	// Output:
	// false 2 <nil>
	// false 1 <nil>
	// false 0 <nil>
	// true 0 <nil>
}
