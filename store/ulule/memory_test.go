package ulule

import (
	"context"
	"runtime"
	"testing"
	"time"

	limiter "github.com/ulule/limiter/v3"
)

// Capacity keys of a Rate take 24 bytes each, made at the Rate's first use.
func TestMemoryPerKey(t *testing.T) {
	const keys = 1 << 16
	s := newStore(t, Options{Capacity: keys})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	s.Get(context.Background(), "k", limiter.Rate{Limit: 1, Period: time.Second})
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(s)
	b := int64(after.TotalAlloc - before.TotalAlloc)
	if per := float64(b) / keys; per < 23 || per > 25 {
		t.Errorf("%d keys take %d bytes, %.1f a key, not 24", keys, b, per)
	}
}
