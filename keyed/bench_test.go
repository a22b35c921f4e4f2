package keyed

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
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
	for _, n := range []int{1000, 100000} {
		b.Run(fmt.Sprint("keys=", n), func(b *testing.B) {
			keys := benchKeys(n)
			t, err := New(100, time.Second, 100, WithCapacity(n*5/4))
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
