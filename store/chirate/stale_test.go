package chirate

import (
	"errors"
	"testing"
	"time"
)

// An increment for the window before the one a key last counted in (a
// request whose window was read just before the boundary) lands in that
// earlier window, and Get of that window reads its count high, never low;
// an increment for an older window is refused.
func TestStaleWindow(t *testing.T) {
	c := newCounter(t, 0, time.Second)
	w0 := time.Unix(1000, 0)
	w1 := w0.Add(time.Second)
	if err := c.IncrementBy("k", w1, 2); err != nil {
		t.Fatal(err)
	}
	if err := c.IncrementBy("k", w0, 3); err != nil {
		t.Fatal(err)
	}
	if curr, prev, err := c.Get("k", w1, w0); curr != 2 || prev != 3 || err != nil {
		t.Fatalf("Get = %d, %d, %v; want 2, 3", curr, prev, err)
	}
	if curr, prev, err := c.Get("k", w0, w0.Add(-time.Second)); curr < 3 || prev != 0 || err != nil {
		t.Fatalf("Get of the window before the key's latest = %d, %d, %v; want at least the 3 counted there, and 0", curr, prev, err)
	}
	if err := c.IncrementBy("k", w0.Add(-time.Second), 1); !errors.Is(err, ErrCount) {
		t.Fatalf("two windows back: %v, want ErrCount", err)
	}
	if curr, prev, _ := c.Get("k", w1, w0); curr != 2 || prev != 3 {
		t.Fatalf("after an increment two windows back: Get = %d, %d; want 2, 3", curr, prev)
	}
}

// Get during increments from other goroutines (outside httprate's lock):
// the previous window's count never reads low, whatever lands between
// Get's two reads.
func TestGetDuringIncrements(t *testing.T) {
	c := newCounter(t, 0, time.Second)
	w0 := time.Unix(1000, 0)
	w1 := w0.Add(time.Second)
	const prev, writers, each = 100, 4, 3000
	if err := c.IncrementBy("k", w0, prev); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	for range writers {
		go func() {
			defer func() { done <- struct{}{} }()
			for range each {
				if err := c.Increment("k", w1); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	low := 0
	for running := writers; running > 0; {
		select {
		case <-done:
			running--
		default:
			if _, p, _ := c.Get("k", w1, w0); p < prev {
				low++
			}
		}
	}
	if low > 0 {
		t.Fatalf("prev read below %d in %d Gets", prev, low)
	}
	if curr, p, _ := c.Get("k", w1, w0); curr != writers*each || p != prev {
		t.Fatalf("at rest: Get = %d, %d; want %d, %d", curr, p, writers*each, prev)
	}
}
