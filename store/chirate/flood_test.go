package chirate

import (
	"errors"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/go-chi/httprate"
)

// A flood of new keys in one window: this counter's heap stays as it was,
// new keys past its room are refused (ErrFull, which httprate answers
// with its error handler), and a busy key's counts are never lost.
// httprate's own counter grows with every key (logged for comparison).
func TestFloodFixedMemory(t *testing.T) {
	n := 200_000
	if testing.Short() {
		n = 50_000
	}
	c := newCounter(t, 1024, time.Hour)
	win := time.Unix(7200, 0)
	if err := c.IncrementBy("busy", win, 3); err != nil {
		t.Fatal(err)
	}
	heap := func(add func(key string) error) (int64, int) {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		refused := 0
		var buf []byte
		for i := range n {
			buf = strconv.AppendInt(buf[:0], int64(i), 10)
			if err := add(string(buf)); errors.Is(err, ErrFull) {
				refused++
			} else if err != nil {
				t.Fatal(err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		return int64(after.HeapAlloc) - int64(before.HeapAlloc), refused
	}
	grew, refused := heap(func(k string) error { return c.Increment(k, win) })
	local := httprate.NewLocalLimitCounter(time.Hour)
	localGrew, _ := heap(func(k string) error { return local.Increment(k, win) })
	runtime.KeepAlive(local)
	t.Logf("%d new keys: heap +%d B here (%d refused), +%d B with httprate's counter", n, grew, refused, localGrew)
	if grew > 256<<10 {
		t.Errorf("heap grew by %d bytes over %d new keys", grew, n)
	}
	if refused < n-1024 {
		t.Errorf("%d of %d new keys refused, with room for 1024 keys", refused, n)
	}
	if curr, prev, _ := c.Get("busy", win, win.Add(-time.Hour)); curr != 3 || prev != 0 {
		t.Errorf("the busy key counts %d, %d after the flood; want 3, 0", curr, prev)
	}
}
