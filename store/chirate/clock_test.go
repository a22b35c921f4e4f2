package chirate

import (
	"errors"
	"testing"
	"time"
)

// The wall clock stepping back, as the doc says: a key counted in a window
// still ahead of the clock reads high and is refused until the clock is
// back, new keys count exactly; a step of fewer than 32,000 windows ahead and back
// changes nothing else; a longer one makes counts read high (never low)
// until the clock passes where it was. The window has the fewest windows
// to a wrap of the table's time field (2^28 units of 1/8192 window).
func TestClockSteps(t *testing.T) {
	const w = time.Duration(1<<30 - 1)
	const base = int64(2e9)
	at := func(i int64) time.Time { return time.Unix(0, i*int64(w)) }
	get := func(c *Counter, key string, i int64) (int, int) {
		t.Helper()
		curr, prev, err := c.Get(key, at(i), at(i-1))
		if err != nil {
			t.Fatalf("Get %s at %d: %v", key, i-base, err)
		}
		return curr, prev
	}
	inc := func(c *Counter, key string, i int64, n int) error {
		t.Helper()
		return c.IncrementBy(key, at(i), n)
	}

	c := newCounter(t, 64, w)
	if err := inc(c, "old", base, 3); err != nil {
		t.Fatal(err)
	}
	if err := inc(c, "old", base-100, 1); !errors.Is(err, ErrCount) {
		t.Fatalf("a key counted 100 windows ahead of the clock: %v, want ErrCount", err)
	}
	if curr, _ := get(c, "old", base-100); curr < 3 {
		t.Fatalf("a key counted 100 windows ahead of the clock: curr = %d, below the 3 counted ahead", curr)
	}
	if err := inc(c, "new", base-100, 2); err != nil {
		t.Fatalf("a new key 100 windows back: %v", err)
	}
	if curr, prev := get(c, "new", base-100); curr != 2 || prev != 0 {
		t.Fatalf("a new key 100 windows back: Get = %d, %d; want 2, 0", curr, prev)
	}
	if curr, prev := get(c, "old", base); curr != 3 || prev != 0 {
		t.Fatalf("the clock back at the key's window: Get = %d, %d; want 3, 0", curr, prev)
	}

	if err := inc(c, "glitch", base+32_000, 1); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"old", "newer"} {
		if err := inc(c, key, base+1, 4); err != nil {
			t.Fatalf("%s after a step of 32,000 windows ahead and back: %v", key, err)
		}
	}
	if curr, prev := get(c, "old", base+1); curr != 4 || prev != 3 {
		t.Fatalf("after a step of 32,000 windows ahead and back: Get = %d, %d; want 4, 3", curr, prev)
	}
	if curr, prev := get(c, "newer", base+1); curr != 4 || prev != 0 {
		t.Fatalf("a new key after a step of 32,000 windows ahead and back: Get = %d, %d; want 4, 0", curr, prev)
	}

	c = newCounter(t, 64, w)
	if err := inc(c, "old", base, 5); err != nil {
		t.Fatal(err)
	}
	const far = 100_000
	if err := inc(c, "glitch", base+far, 1); err != nil {
		t.Fatal(err)
	}
	if curr, _ := get(c, "old", base); curr < 5 {
		t.Fatalf("after a step of %d windows ahead and back: curr = %d, below the 5 counted", far, curr)
	}
	if err := inc(c, "new", base, 2); err == nil {
		if curr, _ := get(c, "new", base); curr < 2 {
			t.Fatalf("a new key after a step of %d windows ahead and back: curr = %d, below the 2 counted", far, curr)
		}
	} else if !errors.Is(err, ErrCount) {
		t.Fatal(err)
	}
	for _, key := range []string{"old", "new"} {
		if err := inc(c, key, base+far+2, 6); err != nil {
			t.Fatalf("%s once the clock passed the step: %v", key, err)
		}
		if curr, prev := get(c, key, base+far+2); curr != 6 || prev != 0 {
			t.Fatalf("%s once the clock passed the step: Get = %d, %d; want 6, 0", key, curr, prev)
		}
	}
}
