package bucketcore

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/cellrate/cellrate/atomic128"
	"github.com/cellrate/cellrate/nanotime"
)

var sink bool

// BenchmarkNanotimeNow is the baseline for BenchmarkAllow: Allow costs
// nanotime.Now plus AllowAt.
func BenchmarkNanotimeNow(b *testing.B) {
	var s int64
	for b.Loop() {
		s += nanotime.Now()
	}
	sink = s == 1
}

func BenchmarkAllowAt(b *testing.B) {
	b.Logf("atomic128 path: %s", atomic128.Path())
	b.Run("constant-denying", func(b *testing.B) {
		l, _ := New(3, time.Second, 10)
		b.ReportAllocs()
		for b.Loop() {
			sink = l.AllowAt(0)
		}
	})
	b.Run("advancing-admitting", func(b *testing.B) {
		// One token per 3 ns, now advancing 3 ns per call: every call is
		// admitted.
		l, _ := New(1, 3, 10)
		b.ReportAllocs()
		now := int64(0)
		for b.Loop() {
			now += 3
			sink = l.AllowAt(now)
		}
	})
	b.Run("advancing-fractional", func(b *testing.B) {
		// 0.5 per second, a second per call: every other call admitted.
		l, _ := NewRate(0.5, 10)
		b.ReportAllocs()
		now := int64(0)
		for b.Loop() {
			now += int64(time.Second)
			sink = l.AllowAt(now)
		}
	})
}

func BenchmarkAllow(b *testing.B) {
	l, _ := New(1, 1, 1000) // one per ns: mostly admitted
	b.ReportAllocs()
	for b.Loop() {
		sink = l.Allow()
	}
}

func BenchmarkAllowNAt(b *testing.B) {
	l, _ := New(1, 3, 10)
	b.ReportAllocs()
	now := int64(0)
	for b.Loop() {
		now += 6
		r, _ := l.AllowNAt(now, 2)
		sink = r.OK
	}
}

func BenchmarkReserveCancel(b *testing.B) {
	l, _ := New(1, 3, 10)
	b.ReportAllocs()
	now := int64(0)
	for b.Loop() {
		now += 3
		r, _ := l.ReserveNAt(now, 1)
		sink = r.CancelAt(now)
	}
}

func BenchmarkTakeUpToAt(b *testing.B) {
	l, _ := New(1, 1, 1000)
	b.ReportAllocs()
	now := int64(0)
	for b.Loop() {
		now += 16
		sink = l.TakeUpToAt(now, 16).N == 0
	}
}

// BenchmarkParallel runs AllowAt on every P, each goroutine advancing its
// own injected time: admitting (one per ns, and a burst of 2^30 that covers
// the drift between the goroutines' clocks) and mostly denying (100 per
// second).
func BenchmarkParallel(b *testing.B) {
	for _, c := range []struct {
		name   string
		events int64
		period time.Duration
		burst  int64
	}{{"admitting", 1, 1, 1 << 30}, {"mostly-denying", 100, time.Second, 1000}} {
		b.Run(c.name, func(b *testing.B) {
			l, _ := New(c.events, c.period, c.burst)
			b.ReportAllocs()
			var admitted atomic.Int64
			b.RunParallel(func(pb *testing.PB) {
				now, n := int64(0), int64(0)
				for pb.Next() {
					now += 10
					if l.AllowAt(now) {
						n++
					}
				}
				admitted.Add(n)
			})
			b.ReportMetric(float64(admitted.Load())/float64(b.N), "admitted/op")
		})
	}
}

// BenchmarkLoadCAS128 is the floor for an admitting AllowAt: one atomic128
// load and one 128-bit compare-and-swap.
func BenchmarkLoadCAS128(b *testing.B) {
	var x atomic128.Uint64Pair
	for b.Loop() {
		t, d := x.Load()
		x.CompareAndSwap(t, d, t+1, d)
	}
}
