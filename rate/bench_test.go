package rate_test

import (
	"testing"
	"time"

	"github.com/cellrate/cellrate/internal/bucketcore"
	"github.com/cellrate/cellrate/rate"
)

// The drop-in's hot paths beside bucket's AllowAt, which they run: the
// difference is the time.Time mapping and the shape load.
func BenchmarkAllow(b *testing.B) {
	mono := time.Now()
	wall := time.Unix(1_700_000_000, 0)
	for _, c := range []struct {
		name string
		op   func(l *rate.Limiter, i int) bool
	}{
		{"Allow", func(l *rate.Limiter, _ int) bool { return l.Allow() }},
		{"AllowN/monotonic", func(l *rate.Limiter, i int) bool { return l.AllowN(mono.Add(time.Duration(i)*100), 1) }},
		{"AllowN/wall", func(l *rate.Limiter, i int) bool { return l.AllowN(wall.Add(time.Duration(i)*100), 1) }},
		{"AllowN/n=2", func(l *rate.Limiter, i int) bool { return l.AllowN(mono.Add(time.Duration(i)*100), 2) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			l := rate.NewLimiter(1e9, 1e9)
			b.ReportAllocs()
			for i := range b.N {
				c.op(l, i)
			}
		})
	}
	b.Run("bucketcore.AllowAt", func(b *testing.B) {
		l, _ := bucketcore.NewRate(1e9, 1e9)
		b.ReportAllocs()
		for i := range b.N {
			l.AllowAt(int64(i) * 100)
		}
	})
}
