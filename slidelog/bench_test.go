package slidelog

import (
	"testing"
	"time"

	"github.com/cellrate/cellrate/window"
)

// The exact log against the counter's estimate, on the same calls: admit
// offers far below the limit, deny far above it.
func BenchmarkAllowAt(b *testing.B) {
	for _, c := range []struct {
		name string
		step int64 // ns between calls
	}{{"admit", int64(time.Millisecond)}, {"deny", 1}} {
		for _, l := range []int64{4, 16, 64} {
			b.Run(c.name+"/slidelog/L="+itoa(l), func(b *testing.B) {
				lim, _ := New(l, time.Second)
				now := int64(time.Hour)
				for range b.N {
					now += c.step * int64(time.Second) / int64(time.Millisecond) / l
					lim.AllowAt(now)
				}
			})
			b.Run(c.name+"/window/L="+itoa(l), func(b *testing.B) {
				lim, _ := window.New(l, time.Second)
				now := int64(time.Hour)
				for range b.N {
					now += c.step * int64(time.Second) / int64(time.Millisecond) / l
					lim.AllowAt(now)
				}
			})
		}
	}
}

func itoa(n int64) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
