package window

import (
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkAllowAt admits at a rate the limit allows, so every call writes.
func BenchmarkAllowAt(b *testing.B) {
	l, _ := New(MaxLimit, time.Second)
	now := int64(time.Hour)
	b.ReportAllocs()
	for b.Loop() {
		now += 1000
		l.AllowAt(now)
	}
}

// BenchmarkAllowAtDenied runs against a full window: every call only loads.
func BenchmarkAllowAtDenied(b *testing.B) {
	l, _ := New(100, time.Hour)
	now := int64(time.Hour)
	for l.AllowAt(now) {
	}
	b.ReportAllocs()
	for b.Loop() {
		now++
		l.AllowAt(now)
	}
}

func BenchmarkAllowNAt(b *testing.B) {
	l, _ := New(MaxLimit, time.Second)
	now := int64(time.Hour)
	b.ReportAllocs()
	for b.Loop() {
		now += 1000
		_, _ = l.AllowNAt(now, 2)
	}
}

func BenchmarkAllowAtParallel(b *testing.B) {
	l, _ := New(MaxLimit, time.Second)
	var clock atomic.Int64
	clock.Store(int64(time.Hour))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		now := clock.Add(1000)
		for i := 0; pb.Next(); i++ {
			if i&63 == 0 {
				now = clock.Add(64000)
			}
			l.AllowAt(now)
		}
	})
}
