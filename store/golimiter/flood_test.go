package golimiter

import (
	"context"
	"github.com/sethvargo/go-limiter/memorystore"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// A flood of new keys leaves the heap as it was and does not free a busy
// key from its bound.
func TestFloodFixedMemory(t *testing.T) {
	n := 200_000
	if testing.Short() {
		n = 20_000
	}
	s := newStore(t, &Config{Tokens: 5, Interval: time.Hour, Capacity: 1024})
	ctx := context.Background()
	admitted := 0
	take := func() {
		if _, _, _, ok, _ := s.Take(ctx, "busy"); ok {
			admitted++
		}
	}
	for range 5 {
		take()
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var buf []byte
	for i := range n {
		buf = strconv.AppendInt(buf[:0], int64(i), 10)
		s.Take(ctx, string(buf))
		if i%1000 == 0 {
			take()
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	grew := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	if !testing.Short() { // the shipped store, for the figure
		m, err := memorystore.New(&memorystore.Config{Tokens: 5, Interval: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close(ctx)
		shipped := heapGrowth(n, func(key string) { m.Take(ctx, key) })
		runtime.KeepAlive(m)
		t.Logf("%d new keys: heap %+d B here, %+d B with the shipped store", n, grew, shipped)
	}
	if grew > 256<<10 {
		t.Errorf("heap grew by %d bytes over %d new keys", grew, n)
	}
	if admitted != 5 {
		t.Errorf("the busy key was admitted %d times, bound 5", admitted)
	}
}

// heapGrowth returns how much the live heap grows while add runs for n
// distinct keys.
func heapGrowth(n int, add func(key string)) int64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var buf []byte
	for i := range n {
		buf = strconv.AppendInt(buf[:0], int64(i), 10)
		add(string(buf))
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	return int64(after.HeapAlloc) - int64(before.HeapAlloc)
}
