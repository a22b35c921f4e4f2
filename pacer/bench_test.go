package pacer

import (
	"testing"
	"time"

	"github.com/cellrate/cellrate/gcra"
)

// ReserveAt against gcra's AllowAt and AllowNAt on the same rate, with
// time moving 100 ns per call: the TAT restarts at every call (idle).
func BenchmarkReserveAt(b *testing.B) {
	b.Run("pacer", func(b *testing.B) {
		p, _ := New(1e9, time.Second)
		now := int64(time.Hour)
		for range b.N {
			now += 100
			p.ReserveAt(now)
		}
	})
	b.Run("gcra-AllowAt", func(b *testing.B) {
		l, _ := gcra.New(1e9, time.Second, 1)
		now := int64(time.Hour)
		for range b.N {
			now += 100
			l.AllowAt(now)
		}
	})
	b.Run("gcra-AllowNAt", func(b *testing.B) {
		l, _ := gcra.New(1e9, time.Second, 1)
		now := int64(time.Hour)
		for range b.N {
			now += 100
			l.AllowNAt(now, 1)
		}
	})
	b.Run("pacer-waiting", func(b *testing.B) { // 1 per 200 ns: every call waits
		p, _ := New(1, 200)
		now := int64(time.Hour)
		for range b.N {
			now += 100
			p.ReserveAt(now)
		}
	})
}
