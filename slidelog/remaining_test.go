package slidelog

import (
	"testing"
	"time"
)

// TestRemainingPartlyUsed: RemainingAt counts exactly the slots free at
// now on a log partly used at several times: a slot used at v is free from
// v+W on, not before, and AllowNAt's Remaining agrees.
func TestRemainingPartlyUsed(t *testing.T) {
	const w = int64(time.Second)
	l, err := New(5, time.Duration(w))
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := l.AllowNAt(0, 2); !r.OK || r.Remaining != 3 {
		t.Fatalf("2 at 0: %+v", r)
	}
	if r, _ := l.AllowNAt(w/2, 1); !r.OK || r.Remaining != 2 {
		t.Fatalf("1 at W/2: %+v", r)
	}
	for _, c := range []struct{ now, want int64 }{
		{0, 2}, {w / 2, 2}, {w - 1, 2}, {w, 4}, {w + w/2 - 1, 4}, {w + w/2, 5}, {3 * w, 5},
	} {
		if got := l.RemainingAt(c.now); got != c.want {
			t.Errorf("RemainingAt(%d) = %d, want %d", c.now, got, c.want)
		}
		if r, _ := l.AllowNAt(c.now, 0); r.Remaining != c.want {
			t.Errorf("AllowNAt(%d, 0).Remaining = %d, want %d", c.now, r.Remaining, c.want)
		}
	}
}
