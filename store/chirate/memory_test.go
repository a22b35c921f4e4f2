package chirate

import (
	"runtime"
	"testing"
	"time"
)

// Capacity keys take 24 bytes each, made by Config.
func TestMemoryPerKey(t *testing.T) {
	const keys = 1 << 16
	c, err := New(Options{Capacity: keys})
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	c.Config(100, time.Minute)
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(c)
	b := int64(after.TotalAlloc - before.TotalAlloc)
	if per := float64(b) / keys; per < 23 || per > 25 {
		t.Errorf("%d keys take %d bytes, %.1f a key, not 24", keys, b, per)
	}
}
