package chirate

import (
	"errors"
	"runtime"
	"strconv"
	"sync"
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

// New keys flooding a small table from many goroutines while a busy key
// counts: the busy key never loses its slot or a count, each new key is
// either counted exactly or refused with ErrFull, and the table fills to
// its room, no further.
func TestFloodConcurrent(t *testing.T) {
	const room, workers, each, busy = 64, 4, 1000, 50
	c := newCounter(t, room, time.Hour)
	win := time.Unix(7200, 0)
	if err := c.Increment("busy", win); err != nil {
		t.Fatal(err)
	}
	counted := make([][]string, workers)
	var wg sync.WaitGroup
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if i%(each/busy) == 0 {
					if err := c.Increment("busy", win); err != nil {
						t.Errorf("the busy key: %v", err)
					}
				}
				key := strconv.Itoa(g) + "/" + strconv.Itoa(i)
				switch err := c.IncrementBy(key, win, 2); {
				case err == nil:
					counted[g] = append(counted[g], key)
				case !errors.Is(err, ErrFull):
					t.Errorf("new key %s: %v", key, err)
				}
			}
		}()
	}
	wg.Wait()
	n := 0
	for _, keys := range counted {
		for _, key := range keys {
			if curr, prev, err := c.Get(key, win, win.Add(-time.Hour)); err != nil || curr != 2 || prev != 0 {
				t.Errorf("new key %s: Get = %d, %d, %v; want 2, 0", key, curr, prev, err)
			}
			n++
		}
	}
	if n != room-1 {
		// Each of the 4,000 keys probes 2 of the 16 groups: all of them
		// fill (a group no key probes has odds of (7/8)^4000).
		t.Errorf("%d new keys counted in a table of %d holding the busy key; want it filled", n, room)
	}
	if curr, prev, err := c.Get("busy", win, win.Add(-time.Hour)); err != nil || curr != 1+workers*busy || prev != 0 {
		t.Errorf("the busy key: Get = %d, %d, %v; want %d, 0", curr, prev, err, 1+workers*busy)
	}
}
