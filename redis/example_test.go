package redis_test

import (
	"context"
	"fmt"
	"math"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/cellrate/cellrate/adaptive"
	"github.com/cellrate/cellrate/redis"
)

// A limit shared by every process using the same Redis: 100 requests per
// second per client, bursts of 20. (Examples here need a server: they are
// compiled, not run; the tests run the same calls on real servers.)
func ExampleNewGCRA() {
	c := goredis.NewClient(&goredis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	l, err := redis.NewGCRA(c, "rate:", 100, time.Second, 20)
	if err != nil {
		panic(err)
	}
	r, err := l.AllowN(context.Background(), "client-42", 1)
	switch {
	case err != nil:
		fmt.Println("Redis failed; deny:", err)
	case !r.OK:
		fmt.Println("retry after", time.Duration(r.RetryAfter))
	default:
		fmt.Println("admitted;", r.Remaining, "left")
	}
}

// A sliding window on a Redis Cluster: at most 1000 requests in any
// minute per API key (as package window estimates it).
func ExampleNewWindow() {
	c := goredis.NewClusterClient(&goredis.ClusterOptions{
		Addrs:                 []string{"10.0.0.1:6379", "10.0.0.2:6379", "10.0.0.3:6379"},
		ContextTimeoutEnabled: true,
	})
	l, err := redis.NewWindow(c, "win:", 1000, time.Minute, redis.WithTimeout(50*time.Millisecond))
	if err != nil {
		panic(err)
	}
	ok, err := l.Allow(context.Background(), "api-key-7")
	fmt.Println(ok, err)
}

// A two-tier limiter: each process borrows up to 50 units at a time (what
// it spends, at its pace) and answers from them without a round trip; 5000
// per second in all, bursts of 2000 (1500 of them in Redis: what the rate
// refills in a lease, 5000*0.1s, is kept back), and while Redis is down
// each process admits a tenth of that on its own.
func ExampleNewTwoTier() {
	c := goredis.NewClient(&goredis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	l, err := redis.NewTwoTier(c, "tt:", 5000, time.Second, 2000,
		redis.WithBatch(50), redis.WithLease(100*time.Millisecond), redis.WithFailOpen(0.1))
	if err != nil {
		panic(err)
	}
	defer l.Close(context.Background()) // gives back the units this process holds
	ok, err := l.Allow(context.Background(), "global")
	fmt.Println(ok, err)
}

// A window limiter whose limit an AIMD adapts to the backend's health: it
// starts at 200 requests a second, gains 10 a second while calls succeed,
// halves on failures, and stays in [20, 500]. Every process sharing the
// keys can run its own AIMD; each decision uses its process's limit.
func ExampleLimiter_SetRateAt() {
	c := goredis.NewClient(&goredis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	l, err := redis.NewWindow(c, "api:", 200, time.Second)
	if err != nil {
		panic(err)
	}
	a, err := adaptive.NewAIMD(l, 200, 20, 500, 10, 0.5) // SetRateAt makes l a Setter
	if err != nil {
		panic(err)
	}
	ok, err := l.Allow(context.Background(), "backend")
	if ok && err == nil {
		a.Record(callBackend() == nil)
	}
	fmt.Println(ok, err)
}

// A GCRA limiter whose rate an AIMD adapts: 100 requests a second per
// client with bursts of 20 at first, plus 5 a second after each good
// interval, times 0.7 after a bad one, within [10, 400]. A key written at
// one rate is converted at its next decision under another: what it owed
// carries over, so a change never frees a burst. The rates are rounded to
// whole events a second: each distinct rate is a Function library on the
// server, so at most 391 of them here.
func ExampleLimiter_SetRateAt_gcra() {
	c := goredis.NewClient(&goredis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	l, err := redis.NewGCRA(c, "rate:", 100, time.Second, 20)
	if err != nil {
		panic(err)
	}
	a, err := adaptive.NewAIMD(wholeRates{l}, 100, 10, 400, 5, 0.7)
	if err != nil {
		panic(err)
	}
	r, err := l.AllowN(context.Background(), "client-42", 1)
	if r.OK && err == nil {
		a.Record(callBackend() == nil)
	}
	fmt.Println(r.OK, err)
}

// wholeRates sets its Limiter's rate rounded to whole events a second.
type wholeRates struct{ *redis.Limiter }

func (w wholeRates) SetRateAt(now int64, perSecond float64) error {
	return w.Limiter.SetRateAt(now, math.Round(perSecond))
}

func callBackend() error { return nil }
