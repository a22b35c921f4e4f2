package ululeredis_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/cellrate/cellrate/store/ululeredis"
	limiter "github.com/ulule/limiter/v3"
	redisstore "github.com/ulule/limiter/v3/drivers/store/redis"
)

// BenchmarkGet pairs this store with ulule's Redis store, the store it
// replaces, on the same redis-server: Get over 1,000 keys, admitting, one
// goroutine. Compare with benchstat -col /store.
func BenchmarkGet(b *testing.B) {
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = "client-" + strconv.Itoa(i)
	}
	rate := limiter.Rate{Limit: 30000, Period: 10 * time.Millisecond}
	ctx := context.Background()
	for _, name := range []string{"cellrate", "ulule"} {
		b.Run("store="+name, func(b *testing.B) {
			prefix := fmt.Sprint("bench", time.Now().UnixNano())
			var s limiter.Store
			var err error
			if name == "cellrate" {
				s, err = ululeredis.New(client(b), ululeredis.Options{Prefix: prefix})
			} else {
				s, err = redisstore.NewStoreWithOptions(client(b), limiter.StoreOptions{Prefix: prefix})
			}
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if c, err := s.Get(ctx, keys[i%len(keys)], rate); err != nil || c.Reached {
					b.Fatal("denied", err)
				}
				i++
			}
		})
	}
}
