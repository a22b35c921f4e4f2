package packed64core

import (
	"errors"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cellrate/cellrate/limit"
)

// cellState is a cell's word and raw mark: what an exact Refund restores.
type cellState struct{ word, mark uint64 }

func bucketState(b *Bucket) cellState {
	return cellState{b.c.word.Load(), uint64(b.c.hw.t.Load())}
}

func windowState(w *Window) cellState {
	return cellState{w.c.word.Load(), uint64(w.c.hw.t.Load())}
}

// TestRefundFarAhead: an admission far ahead of the clock raises the mark
// past the word's wrap; its Refund puts back the mark with the word, so the
// cell is as before it (limit.Member's promise), and a request at the old
// time sees the tokens it had. Before, the raised mark stayed and the
// restored word read as written a wrap later: 0 tokens.
func TestRefundFarAhead(t *testing.T) {
	for _, per := range []time.Duration{time.Millisecond, 100 * time.Millisecond, time.Second, time.Minute} {
		b, _ := NewBucket(1, per, 3)
		b.TakeAt(0, 1)
		s0 := bucketState(b)
		_, rc, _ := b.TakeAt(int64(24*time.Hour), 1)
		b.Refund(rc)
		if got := bucketState(b); got != s0 || b.RemainingAt(0) != 2 {
			t.Errorf("bucket 1/%v refunded at +24h: %+v, want %+v; %d left at 0, want 2", per, got, s0, b.RemainingAt(0))
		}
		w, _ := NewWindow(3, per)
		w.TakeAt(0, 1)
		s0 = windowState(w)
		_, rc, _ = w.TakeAt(int64(6*time.Hour), 1)
		w.Refund(rc)
		if got := windowState(w); got != s0 || w.RemainingAt(0) != 2 {
			t.Errorf("window 3/%v refunded at +6h: %+v, want %+v; %d left at 0, want 2", per, got, s0, w.RemainingAt(0))
		}
	}
}

// TestRefundAtEndOfTime: near math.MaxInt64 the half-wrap rule is a
// difference, not a saturated sum: a Refund just before the end of time is
// exact. Before, at + Wrap/2 saturated and the Refund gave nothing back.
func TestRefundAtEndOfTime(t *testing.T) {
	for _, now := range []int64{math.MaxInt64 - 1e9, math.MaxInt64 - 1, math.MaxInt64} {
		b, _ := NewBucket(1, time.Second, 3)
		_, rc, _ := b.TakeAt(now, 1)
		b.Refund(rc)
		if got := b.RemainingAt(now); got != 3 {
			t.Errorf("bucket refunded at %d: %d left, want 3", now, got)
		}
		w, _ := NewWindow(3, time.Second)
		_, rc, _ = w.TakeAt(now, 1)
		w.Refund(rc)
		if got := w.RemainingAt(now); got != 3 {
			t.Errorf("window refunded at %d: %d left, want 3", now, got)
		}
	}
}

// TestRefundAfterMarkMoved: once the mark has moved on (here raised by a
// request at a later time), a Refund puts back the word alone: no more
// tokens than the word had, read against the higher mark.
func TestRefundAfterMarkMoved(t *testing.T) {
	b, _ := NewBucket(1, time.Second, 3)
	b.TakeAt(0, 1)
	_, rc, _ := b.TakeAt(int64(time.Hour), 1)
	b.c.hw.Raise(int64(2*time.Hour), b.c.p.clk.slack)
	mark := b.c.hw.t.Load()
	b.Refund(rc)
	if b.c.hw.t.Load() != mark || b.c.word.Load() != rc.Before[0] {
		t.Fatalf("the word alone goes back: word %#x (want %#x), mark %d (want %d)", b.c.word.Load(), rc.Before[0], b.c.hw.t.Load(), mark)
	}
	if got := b.RemainingAt(int64(2 * time.Hour)); got != 3 {
		t.Fatalf("%d left 2h on, want 3", got)
	}
}

// TestLockedMark: while a Refund holds the mark, decisions deny for that
// instant without writing (errors still come first, n == 0 is admitted),
// raises do not pass the hold, and reads wait for it.
func TestLockedMark(t *testing.T) {
	b, _ := NewBucket(1, time.Second, 3)
	w, _ := NewWindow(3, time.Second)
	b.c.hw.t.Store(locked)
	w.c.hw.t.Store(locked)
	for name, m := range map[string]limit.Member{"bucket": b, "window": w} {
		if m.AllowAt(5) {
			t.Errorf("%s: AllowAt while locked", name)
		}
		if r, rc, err := m.TakeAt(5, 1); r.OK || r.RetryAfter != 1 || rc.N != 0 || err != nil {
			t.Errorf("%s: TakeAt(5, 1) while locked = %+v, %+v, %v", name, r, rc, err)
		}
		if r, err := m.AllowNAt(5, 0); !r.OK || err != nil {
			t.Errorf("%s: AllowNAt(5, 0) while locked = %+v, %v", name, r, err)
		}
		if _, err := m.AllowNAt(5, -1); !errors.Is(err, limit.ErrNegativeCost) {
			t.Errorf("%s: AllowNAt(5, -1) while locked = %v", name, err)
		}
		if _, err := m.AllowNAt(5, 4); !errors.Is(err, limit.ErrCostExceedsBurst) {
			t.Errorf("%s: AllowNAt(5, 4) while locked = %v", name, err)
		}
		// The whole burst is no error, only a denial for the instant.
		if r, err := m.AllowNAt(5, 3); r.OK || r.RetryAfter != 1 || err != nil {
			t.Errorf("%s: AllowNAt(5, 3) while locked = %+v, %v", name, r, err)
		}
	}
	b.c.hw.Raise(int64(time.Hour), 0)
	if b.c.word.Load() != 0 || w.c.word.Load() != 0 || b.c.hw.t.Load() != locked {
		t.Fatal("a decision or a raise wrote while locked")
	}
	var read atomic.Int64
	done := make(chan struct{})
	go func() { read.Store(b.RemainingAt(5)); close(done) }()
	time.Sleep(time.Millisecond)
	b.c.hw.t.Store(0)
	<-done
	if read.Load() != 3 {
		t.Fatalf("a read during the hold returned %d, want 3 once released", read.Load())
	}
}
