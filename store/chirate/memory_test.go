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

// What httprate calls per request (Get, then IncrementBy) allocates
// nothing, for a key the table holds and for a key it has no room for.
func TestNoAllocations(t *testing.T) {
	c := newCounter(t, 4, time.Minute)
	w := time.Unix(6000, 0)
	for i := range 4 {
		if err := c.Increment(string(rune('a'+i)), w); err != nil {
			t.Fatal(err)
		}
	}
	for _, key := range []string{"a", "no room"} {
		allocs := testing.AllocsPerRun(100, func() {
			_, _, _ = c.Get(key, w, w.Add(-time.Minute))
			_ = c.IncrementBy(key, w, 1)
		})
		if allocs != 0 {
			t.Errorf("key %q: %.1f allocations a request", key, allocs)
		}
	}
}
