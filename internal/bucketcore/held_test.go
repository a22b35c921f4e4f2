package bucketcore

import (
	"testing"
	"time"
)

// TestHeld: a reservation that took tokens gives a live Held of its units,
// whose Cancel gives them back once, while the bucket is as the
// reservation left it; a reservation that took nothing (n = 0, or denied)
// gives the zero Held; a Held of units kept elsewhere (no generation), or
// of none, cancels nothing.
func TestHeld(t *testing.T) {
	l, err := New(1, time.Second, 3)
	if err != nil {
		t.Fatal(err)
	}
	const now = int64(time.Hour)
	r, err := l.ReserveNAt(now, 2)
	if err != nil || !r.OK {
		t.Fatalf("ReserveNAt(now, 2) = %+v, %v", r, err)
	}
	h := r.Held()
	if !h.Live() || h.Units != r.cost || h.Units == 0 {
		t.Fatalf("Held of 2 tokens = %+v, Live %v; want live, %d units", h, h.Live(), r.cost)
	}
	none := h
	none.Units = 0
	if none.Cancel() || l.RemainingAt(now) != 1 {
		t.Fatalf("a Held of no units cancelled: %d left, want 1", l.RemainingAt(now))
	}
	if !h.Cancel() || l.RemainingAt(now) != 3 {
		t.Fatalf("Cancel of a live Held: %d left, want 3", l.RemainingAt(now))
	}
	if h.Live() || h.Cancel() || l.RemainingAt(now) != 3 {
		t.Fatal("a Held cancelled twice")
	}

	r, _ = l.ReserveNAt(now, 1)
	h = r.Held()
	l.AllowNAt(now, 1) // the bucket changed since the reservation
	if h.Cancel() || l.RemainingAt(now) != 1 {
		t.Fatalf("Cancel after a later decision gave back: %d left, want 1", l.RemainingAt(now))
	}

	elsewhere := Held{Units: 3}
	if elsewhere.Live() || elsewhere.Cancel() {
		t.Fatal("a Held with no generation is live or cancelled")
	}
	for _, n := range []int64{0, 4, -1} {
		r, _ := l.ReserveNAt(now, n)
		if h := r.Held(); h != (Held{}) || h.Live() {
			t.Fatalf("ReserveNAt(now, %d) (OK %v) gave Held %+v, want the zero Held", n, r.OK, h)
		}
	}
}
