package ulule

import (
	"context"
	"github.com/ulule/limiter/v3/drivers/store/memory"
	"runtime"
	"strconv"
	"testing"
	"time"

	limiter "github.com/ulule/limiter/v3"
)

// A flood of new keys leaves the heap as it was and does not free a busy
// key from its bound.
func TestFloodFixedMemory(t *testing.T) {
	n := 200_000
	if testing.Short() {
		n = 20_000
	}
	s := newStore(t, Options{Capacity: 1024})
	rate := limiter.Rate{Limit: 5, Period: time.Hour}
	ctx := context.Background()
	admitted := 0
	take := func() {
		if c, err := s.Get(ctx, "busy", rate); err == nil && !c.Reached {
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
		s.Get(ctx, string(buf), rate)
		if i%1000 == 0 {
			take()
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	grew := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	if !testing.Short() { // the shipped store, for the figure
		m := memory.NewStore()
		shipped := heapGrowth(n, func(key string) { m.Get(ctx, key, rate) })
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
