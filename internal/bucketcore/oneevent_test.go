package bucketcore

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestOneEventForms: Reserve, ReserveAt and Wait take exactly one event, as
// ReserveN(1), ReserveNAt(now, 1) and WaitN(ctx, 1) do, in x/time/rate's
// names.
func TestOneEventForms(t *testing.T) {
	now := int64(0)
	l, err := New(1, time.Second, 3, WithClock(func() int64 { return now }))
	if err != nil {
		t.Fatal(err)
	}
	if r, err := l.Reserve(); err != nil || !r.OK || r.Wait != 0 || l.RemainingAt(0) != 2 {
		t.Fatalf("Reserve: %+v %v, %d left", r, err, l.RemainingAt(0))
	}
	if r, err := l.ReserveAt(0); err != nil || !r.OK || r.Wait != 0 || l.RemainingAt(0) != 1 {
		t.Fatalf("ReserveAt: %+v %v, %d left", r, err, l.RemainingAt(0))
	}
	if err := l.Wait(context.Background()); err != nil || l.RemainingAt(0) != 0 {
		t.Fatalf("Wait: %v, %d left", err, l.RemainingAt(0))
	}
	// Empty: each next event waits one more interval.
	if r, _ := l.ReserveAt(0); !r.OK || r.Wait != time.Second {
		t.Fatalf("ReserveAt on empty: %+v", r)
	}
	if r, _ := l.Reserve(); !r.OK || r.Wait != 2*time.Second {
		t.Fatalf("Reserve on empty: %+v", r)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := l.Wait(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait with a cancelled context: %v", err)
	}
}
