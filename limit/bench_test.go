package limit_test

import (
	"testing"
	"time"

	"github.com/cellrate/cellrate/gcra"
	"github.com/cellrate/cellrate/internal/limittest"
	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/window"
)

// BenchmarkAll: a per-key GCRA and a global window through an All, beside
// the same two asked with AllowNAt one after the other, without receipts or
// refunds (the floor).
func BenchmarkAll(b *testing.B) {
	members := func(keyRate int64, globalLimit int64, globalWindow time.Duration) (*gcra.Limiter, *window.Limiter) {
		key, _ := gcra.New(keyRate, time.Second, 1)
		global, _ := window.New(globalLimit, globalWindow)
		return key, global
	}
	for _, c := range []struct {
		name string
		key  int64 // events per second of the key's limit
	}{{"admitting", 1e9}, {"key-denying", 1}} {
		b.Run(c.name+"/all", func(b *testing.B) {
			key, global := members(c.key, window.MaxLimit, time.Second)
			all, _ := limit.NewAll(key, global)
			limittest.Serial(b, all.AllowAt, 1000)
		})
		b.Run(c.name+"/both", func(b *testing.B) {
			key, global := members(c.key, window.MaxLimit, time.Second)
			limittest.Serial(b, func(now int64) bool {
				if r, _ := key.AllowNAt(now, 1); !r.OK {
					return false
				}
				r, _ := global.AllowNAt(now, 1)
				return r.OK
			}, 1000)
		})
	}
	// The global limit denies: the key's unit is taken and refunded.
	b.Run("global-denying/all", func(b *testing.B) {
		key, global := members(1e9, 1, 1<<62)
		global.AllowAt(0)
		all, _ := limit.NewAll(key, global)
		limittest.Serial(b, all.AllowAt, 1000)
	})
}
