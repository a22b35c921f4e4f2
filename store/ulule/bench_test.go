package ulule

import (
	"context"
	"strconv"
	"testing"
	"time"

	limiter "github.com/ulule/limiter/v3"
	"github.com/ulule/limiter/v3/drivers/store/memory"
)

// BenchmarkGet pairs this store with ulule's memory store, the store it
// replaces: Get over 1,000 keys, admitting (a rate no key reaches).
// Compare with benchstat -col /store.
func BenchmarkGet(b *testing.B) {
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = "client-" + strconv.Itoa(i)
	}
	rate := limiter.Rate{Limit: 30000, Period: 10 * time.Millisecond}
	ctx := context.Background()
	for _, name := range []string{"cellrate", "memory"} {
		b.Run("store="+name, func(b *testing.B) {
			var s limiter.Store = memory.NewStore()
			if name == "cellrate" {
				var err error
				if s, err = New(Options{Capacity: 4096}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			i := 0
			start := cpuNs()
			for b.Loop() {
				if c, _ := s.Get(ctx, keys[i%len(keys)], rate); c.Reached {
					b.Fatal("denied")
				}
				i++
			}
			reportCPU(b, start)
		})
	}
}
