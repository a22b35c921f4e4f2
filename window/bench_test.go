package window

import (
	"testing"
	"time"

	"github.com/cellrate/cellrate/internal/limittest"
)

// BenchmarkAllowAt admits at a rate the limit allows, so every call writes.
func BenchmarkAllowAt(b *testing.B) {
	l, _ := New(MaxLimit, time.Second)
	limittest.Serial(b, l.AllowAt, 1000)
}

// BenchmarkAllowAtDenied runs against a full window: every call only loads.
func BenchmarkAllowAtDenied(b *testing.B) {
	l, _ := New(100, time.Hour)
	for l.AllowAt(int64(time.Hour)) {
	}
	limittest.Serial(b, l.AllowAt, 1)
}

func BenchmarkAllowNAt(b *testing.B) {
	l, _ := New(MaxLimit, time.Second)
	limittest.Serial(b, func(now int64) bool { r, _ := l.AllowNAt(now, 2); return r.OK }, 1000)
}

func BenchmarkAllowAtParallel(b *testing.B) {
	l, _ := New(MaxLimit, time.Second)
	limittest.Parallel(b, l.AllowAt)
}
