package golimiter

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

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

// Each limit Set uses is a table of 2*MaxSet slots (24 bytes a slot),
// made by the first Set of that limit: room for every key Set may hold,
// all under one limit, at half load. Slack: 32KB (a page's rounding of
// each of the table's two arrays, its counters, the store's own maps),
// under the 96KB a table of only MaxSet slots would save here.
func TestSetTableFigure(t *testing.T) {
	const maxSet, slack = 1 << 12, 32 << 10
	s := newStore(t, &Config{Tokens: 3, Interval: time.Hour, MaxSet: maxSet})
	ctx := context.Background()
	b := allocated(func() any { return s.Set(ctx, "k", 7, time.Hour) })
	if want := int64(2 * maxSet * 24); b < want || b > want+slack {
		t.Errorf("a limit's table took %d bytes, want %d (2*MaxSet slots of 24 bytes) to %d", b, want, want+slack)
	}
	b = allocated(func() any { return s.Set(ctx, "j", 7, time.Hour) })
	if b > 1024 {
		t.Errorf("a second key under the same limit took %d bytes, want no new table", b)
	}
}
