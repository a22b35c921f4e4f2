package golimiter

import (
	"context"
	"strconv"
	"testing"
	"time"

	limiter "github.com/sethvargo/go-limiter"
	"github.com/sethvargo/go-limiter/memorystore"
)

// BenchmarkTake pairs this store with memorystore, the store it replaces:
// Take over 1,000 keys, admitting (a rate no key reaches). Compare with
// benchstat -col /store.
func BenchmarkTake(b *testing.B) {
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = "client-" + strconv.Itoa(i)
	}
	ctx := context.Background()
	mk := map[string]func() (limiter.Store, error){
		"cellrate": func() (limiter.Store, error) {
			return New(&Config{Tokens: 30000, Interval: 10 * time.Millisecond, Capacity: 4096})
		},
		"memorystore": func() (limiter.Store, error) {
			return memorystore.New(&memorystore.Config{Tokens: 30000, Interval: 10 * time.Millisecond})
		},
	}
	for _, name := range []string{"cellrate", "memorystore"} {
		b.Run("store="+name, func(b *testing.B) {
			s, err := mk[name]()
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close(ctx)
			b.ReportAllocs()
			i := 0
			start := cpuNs()
			for b.Loop() {
				if _, _, _, ok, _ := s.Take(ctx, keys[i%len(keys)]); !ok {
					b.Fatal("denied")
				}
				i++
			}
			reportCPU(b, start)
		})
	}
}
