package packed64core

import (
	"errors"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cellrate/cellrate/limit"
)

// TestTokensAtPartial: TokensAt of a partly used bucket is what is left,
// with the refill's fraction.
func TestTokensAtPartial(t *testing.T) {
	b, err := NewBucket(1, time.Second, 4)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := b.AllowNAt(0, 3); err != nil || !r.OK {
		t.Fatalf("AllowNAt(0, 3) = %+v, %v", r, err)
	}
	for _, c := range []struct {
		now  int64
		want float64
	}{{0, 1}, {5e8, 1.5}, {2e9, 3}, {9e9, 4}} {
		if got := b.TokensAt(c.now); got != c.want {
			t.Errorf("TokensAt(%d) = %v, want %v", c.now, got, c.want)
		}
	}
}

// TestCountBounds: a table of maxCount words is allowed (checked, not
// made), one more or fewer than 1 is refused.
func TestCountBounds(t *testing.T) {
	for _, c := range []struct {
		count int
		ok    bool
	}{{1, true}, {maxCount, true}, {0, false}, {-1, false}} {
		if err := checkCount(c.count); (err == nil) != c.ok {
			t.Errorf("checkCount(%d) = %v, want ok %v", c.count, err, c.ok)
		}
	}
	if maxCount < math.MaxInt {
		if err := checkCount(maxCount + 1); err == nil {
			t.Errorf("checkCount(%d) = nil, want an error", maxCount+1)
		}
	}
}

// TestReadWaitsOutARefund: while a Refund holds the mark, read does not
// return the held mark as a reference time: it returns the mark put back.
// (It runs read before the mark is put back as likely as the scheduler
// lets it; a read after it sees the same, so the test cannot fail falsely.)
func TestReadWaitsOutARefund(t *testing.T) {
	var h HighWater
	var word atomic.Uint64
	word.Store(42)
	h.t.Store(1000 ^ bias)
	h.t.Store(locked)
	type got struct {
		w   uint64
		ref int64
	}
	done := make(chan got, 1)
	go func() {
		w, ref := h.read(&word, 5)
		done <- got{w, ref}
	}()
	time.Sleep(20 * time.Millisecond)
	h.t.Store(1000 ^ bias)
	if g := <-done; g.w != 42 || g.ref != 1005 {
		t.Errorf("read = %d, %d; want 42, 1005", g.w, g.ref)
	}
}

// TestBusyWholeBurst: while a Refund holds the mark, a request of the
// whole burst (or limit) is denied for the instant, not refused as too
// large, and one above it is refused.
func TestBusyWholeBurst(t *testing.T) {
	b, err := NewBucket(1, time.Second, 3)
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWindow(3, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	b.c.hw.t.Store(locked)
	w.c.hw.t.Store(locked)
	for name, allowN := range map[string]func(now, n int64) (limit.Result, error){"bucket": b.AllowNAt, "window": w.AllowNAt} {
		if r, err := allowN(0, 3); err != nil || r.OK || r.RetryAfter != 1 {
			t.Errorf("%s: AllowNAt(0, 3) while held = %+v, %v; want a denial for 1ns", name, r, err)
		}
		if _, err := allowN(0, 4); !errors.Is(err, limit.ErrCostExceedsBurst) {
			t.Errorf("%s: AllowNAt(0, 4) while held: %v, want ErrCostExceedsBurst", name, err)
		}
	}
}
