package golimiter

import (
	"errors"
	"runtime"
	"testing"

	"github.com/cellrate/cellrate/limit"
)

// allocated returns the bytes allocated while f runs (other tests' goroutines
// add little; the live heap would move with their garbage).
func allocated(f func() any) int64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	x := f()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(x)
	return int64(after.TotalAlloc - before.TotalAlloc)
}

// Config's figures: Capacity keys take 24 bytes each, and Tokens goes up
// to one a nanosecond.
func TestConfigFigures(t *testing.T) {
	const keys = 1 << 16
	b := allocated(func() any { return newStore(t, &Config{Capacity: keys}) })
	if per := float64(b) / keys; per < 23 || per > 25 {
		t.Errorf("%d keys take %d bytes, %.1f a key, not 24", keys, b, per)
	}
	if _, err := New(&Config{Tokens: 1000, Interval: 1000}); err != nil {
		t.Errorf("one token a nanosecond: %v", err)
	}
	var pe *limit.ParamError
	if _, err := New(&Config{Tokens: 1001, Interval: 1000}); !errors.As(err, &pe) {
		t.Errorf("past one token a nanosecond: %v", err)
	}
}
