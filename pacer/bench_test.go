package pacer

import (
	"testing"
	"time"

	"github.com/cellrate/cellrate/gcra"
)

// ReserveAt against gcra's AllowAt on the same rate, with time moving
// 100 ns per call: both restart the TAT at every call (idle).
func BenchmarkReserveAt(b *testing.B) {
	b.Run("pacer", func(b *testing.B) {
		p, _ := New(1e9, time.Second)
		now := int64(time.Hour)
		for range b.N {
			now += 100
			p.ReserveAt(now)
		}
	})
	b.Run("gcra", func(b *testing.B) {
		l, _ := gcra.New(1e9, time.Second, 1)
		now := int64(time.Hour)
		for range b.N {
			now += 100
			l.AllowAt(now)
		}
	})
	b.Run("pacer-waiting", func(b *testing.B) { // 1 per 200 ns: every call waits
		p, _ := New(1, 200, WithSlack(0))
		now := int64(time.Hour)
		for range b.N {
			now += 100
			p.ReserveAt(now)
		}
	})
}
