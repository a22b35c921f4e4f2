package chirate

import (
	"errors"
	"testing"
	"time"
)

// An increment for the window before the one a key last counted in (a
// request whose window was read just before the boundary) lands in that
// earlier window; one for an older window is refused.
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
	if err := c.IncrementBy("k", w0.Add(-time.Second), 1); !errors.Is(err, ErrCount) {
		t.Fatalf("two windows back: %v, want ErrCount", err)
	}
	if curr, prev, _ := c.Get("k", w1, w0); curr != 2 || prev != 3 {
		t.Fatalf("after an increment two windows back: Get = %d, %d; want 2, 3", curr, prev)
	}
}
