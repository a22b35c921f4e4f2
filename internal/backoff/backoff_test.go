package backoff

import (
	"sync/atomic"
	"testing"
)

func TestWaitDoubles(t *testing.T) {
	var s Spin
	want := []uint32{First, 2 * First, 4 * First, Max, Max}
	for i, w := range want {
		s.Wait()
		if s.n != min(w, Max) {
			t.Fatalf("wait %d spun %d hints, want %d", i, s.n, min(w, Max))
		}
	}
}

// BenchmarkIncrement is a load and compare-and-swap increment of one word
// from every P, retried at once and with a Spin: the ratio of the two in
// one run is what backoff buys a limiter's admitting loop.
func BenchmarkIncrement(b *testing.B) {
	for _, c := range []struct {
		name string
		wait bool
	}{{"retry-at-once", false}, {"spin", true}} {
		b.Run(c.name, func(b *testing.B) {
			var x atomic.Uint64
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					var s Spin
					for {
						v := x.Load()
						if x.CompareAndSwap(v, v+1) {
							break
						}
						if c.wait {
							s.Wait()
						}
					}
				}
			})
			if x.Load() != uint64(b.N) {
				b.Fatalf("%d increments, want %d", x.Load(), b.N)
			}
		})
	}
}
