package golimiter

import (
	"context"
	"strconv"
	"sync/atomic"
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

// BenchmarkTakeParallel is BenchmarkTake from every P at once.
func BenchmarkTakeParallel(b *testing.B) {
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = "client-" + strconv.Itoa(i)
	}
	ctx := context.Background()
	for _, name := range []string{"cellrate", "memorystore"} {
		b.Run("store="+name, func(b *testing.B) {
			var s limiter.Store
			var err error
			if name == "cellrate" {
				s, err = New(&Config{Tokens: 30000, Interval: 10 * time.Millisecond, Capacity: 4096})
			} else {
				s, err = memorystore.New(&memorystore.Config{Tokens: 30000, Interval: 10 * time.Millisecond})
			}
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close(ctx)
			b.ReportAllocs()
			start := cpuNs()
			var seq atomic.Int64
			b.RunParallel(func(pb *testing.PB) {
				i := int(seq.Add(500))
				for pb.Next() {
					// A goroutine preempted between its clock read and the
					// decision can be denied (package keyed: a time read
					// before a slot was reused); the cost is what is measured.
					s.Take(ctx, keys[i%len(keys)])
					i++
				}
			})
			reportCPU(b, start)
		})
	}
}
