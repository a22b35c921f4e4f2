package bench

import (
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/cellrate/cellrate/gcra"
	"github.com/cellrate/cellrate/keyed"
)

// keyCounts are the two regimes of the keyed benchmarks: keys that fit in
// the caches, and a million, where every draw misses them.
var keyCounts = []int{1000, 1000000}

// keysOf returns n distinct random 16-byte keys.
func keysOf(n int) []string {
	r := rand.New(rand.NewPCG(uint64(n), 16))
	keys := make([]string, n)
	seen := make(map[string]bool, n)
	for i := range keys {
		var b [16]byte
		for {
			for j := range b {
				b[j] = byte(r.Uint32())
			}
			if !seen[string(b[:])] {
				break
			}
		}
		keys[i] = string(b[:])
		seen[keys[i]] = true
	}
	return keys
}

// draw is a goroutine's uniform draw of key indexes (xorshift: a few ns).
type draw struct{ x uint64 }

func (d *draw) next(n int) int {
	d.x ^= d.x << 13
	d.x ^= d.x >> 7
	d.x ^= d.x << 17
	return int((d.x >> 32) * uint64(n) >> 32)
}

// runKeyed times op on keys drawn uniformly, from 1 goroutine or from
// RunParallel's GOMAXPROCS goroutines.
func runKeyed(b *testing.B, g int, keys []string, op func(key string, now int64) bool) {
	b.ReportAllocs()
	if g == 1 {
		d := draw{x: 88172645463325252}
		for i := range b.N {
			op(keys[d.next(len(keys))], int64(i)*100)
		}
		return
	}
	var seed uint64
	b.RunParallel(func(pb *testing.PB) {
		seed++ // RunParallel starts its goroutines one after another
		d := draw{x: 88172645463325252 + seed*0x9E3779B97F4A7C15}
		for i := int64(0); pb.Next(); i++ {
			op(keys[d.next(len(keys))], i*100)
		}
	})
}

// BenchmarkKeyed: one decision for a key drawn from 1,000 or 1,000,000,
// each limiter reading the real clock, every key inserted beforehand.
func BenchmarkKeyed(b *testing.B) {
	for _, n := range keyCounts {
		keys := keysOf(n)
		for _, im := range KeyedImpls() {
			for _, g := range []int{1, runtime.GOMAXPROCS(0)} {
				b.Run(fmt.Sprintf("keys=%d/impl=%s/g=%d", n, im.Name, g), func(b *testing.B) {
					l := im.New(n)
					for _, k := range keys {
						l.Allow(k)
					}
					b.ResetTimer()
					runKeyed(b, g, keys, func(k string, _ int64) bool { return l.Allow(k) })
				})
			}
		}
	}
}

// BenchmarkKeyedAt: keyed's AllowAt on injected time against its floor,
// a single gcra limiter's AllowAt plus hashing the key (the draw is in
// both).
func BenchmarkKeyedAt(b *testing.B) {
	for _, n := range keyCounts {
		keys := keysOf(n)
		for _, g := range []int{1, runtime.GOMAXPROCS(0)} {
			b.Run(fmt.Sprintf("keys=%d/impl=keyed/g=%d", n, g), func(b *testing.B) {
				t, err := keyed.New(KeyedEvents, KeyedPeriod, KeyedEvents, keyed.WithCapacity(KeyedCapacity(n)))
				if err != nil {
					b.Fatal(err)
				}
				for _, k := range keys {
					t.AllowAt(k, 0)
				}
				b.ResetTimer()
				runKeyed(b, g, keys, t.AllowAt)
			})
			b.Run(fmt.Sprintf("keys=%d/impl=gcra+maphash/g=%d", n, g), func(b *testing.B) {
				l, err := gcra.New(KeyedEvents, KeyedPeriod, KeyedEvents)
				if err != nil {
					b.Fatal(err)
				}
				seed := maphash.MakeSeed()
				var sink uint64
				runKeyed(b, g, keys, func(k string, now int64) bool {
					sink += maphash.String(seed, k)
					return l.AllowAt(now)
				})
				_ = sink
			})
		}
	}
}

// BenchmarkKeyedMemory reports the live heap each limiter holds after one
// decision on each of a million keys, per key (the keys' own strings,
// allocated before, excluded), as B/key.
func BenchmarkKeyedMemory(b *testing.B) {
	const n = 1000000
	keys := keysOf(n)
	for _, im := range KeyedImpls() {
		b.Run("impl="+im.Name, func(b *testing.B) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			l := im.New(n)
			for _, k := range keys {
				l.Allow(k)
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			runtime.KeepAlive(l)
			for range b.N {
			}
			b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/n, "B/key")
			b.ReportMetric(0, "ns/op")
		})
	}
	time.Sleep(0)
}
