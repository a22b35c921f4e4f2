package chirate

import (
	"errors"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/cellrate/cellrate/step"
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

// A full table's slot is free for a new key again, as the doc says, once
// its key's two windows have passed with nothing counted, and one more
// window (10ms, if longer) after them; not a window before.
func TestSlotFreeAgain(t *testing.T) {
	for _, w := range []time.Duration{100 * time.Microsecond, 3 * time.Millisecond, 5 * time.Millisecond, 11 * time.Millisecond, time.Second, time.Minute} {
		p, err := step.NewPackedWindow(MaxCount, w)
		if err != nil {
			t.Fatal(err)
		}
		after := max(1, int64((10*time.Millisecond+p.Window()-1)/p.Window()))
		at := func(i int64) time.Time { return time.Unix(0, i*int64(w)) }
		const j = 1_000_000 // the window the table's keys last count in
		for d := int64(1); d <= 2+after; d++ {
			c := newCounter(t, 4, w)
			for k := range 4 {
				if err := c.IncrementBy(strconv.Itoa(k), at(j), 1); err != nil {
					t.Fatal(err)
				}
			}
			err := c.Increment("new", at(j+d))
			if free := d == 2+after; free && err != nil || !free && !errors.Is(err, ErrFull) {
				t.Errorf("window %v: a new key %d windows after the table's keys last counted: %v", w, d, err)
			}
		}
	}
}
