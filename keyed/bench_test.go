package keyed

import (
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cellrate/cellrate/gcra"
)

func benchKeys(n int) []string {
	r := rand.New(rand.NewPCG(1, 2))
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("%016x", r.Uint64())
	}
	return keys
}

// BenchmarkAllowAt: one decision on a key drawn from 1,000 (all in the
// table), injected time.
func BenchmarkAllowAt(b *testing.B) {
	for _, n := range []int{1, 16, 1000, 100000} {
		b.Run(fmt.Sprint("keys=", n), func(b *testing.B) {
			keys := benchKeys(n)
			t, err := New(100, time.Second, 100, WithCapacity(max(n*5/4, 64)))
			if err != nil {
				b.Fatal(err)
			}
			for _, k := range keys {
				t.AllowAt(k, 0)
			}
			b.ReportAllocs()
			b.ResetTimer()
			x := uint64(88172645463325252)
			for i := range b.N {
				x ^= x << 13
				x ^= x >> 7
				x ^= x << 17
				t.AllowAt(keys[(x>>32)*uint64(n)>>32], int64(i)*100)
			}
			b.StopTimer()
			s := t.Stats()
			b.ReportMetric(float64(s.Evictions+s.Reuses)/float64(b.N), "claims/op")
		})
	}
}

// BenchmarkFloor: the same draw, hashing the key and one gcra limiter's
// AllowAt: what a keyed decision cannot go below.
func BenchmarkFloor(b *testing.B) {
	keys := benchKeys(1000)
	l, _ := gcra.New(100, time.Second, 100)
	seed := maphash.MakeSeed()
	x := uint64(88172645463325252)
	var sink uint64
	for i := range b.N {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		sink += maphash.String(seed, keys[(x>>32)*1000>>32])
		l.AllowAt(int64(i) * 100)
	}
	_ = sink
}
