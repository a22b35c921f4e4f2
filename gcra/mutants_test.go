package gcra

import (
	"math"
	"testing"
	"time"
)

// TestLastTATBeforeTheEnd: at an interval of 1 ns and a burst of 1, an
// admission at MaxInt64-3 stores the last TAT a live generation may hold
// (two steps before the end of int64 time): AllowAt and ReserveNAt admit
// it, a second request there is denied (not mistaken for a retired TAT),
// and a request one ns later, whose TAT would pass it, is refused.
func TestLastTATBeforeTheEnd(t *testing.T) {
	const now = math.MaxInt64 - 3
	mk := func() *Limiter {
		l, err := New(1, time.Nanosecond, 1)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	l := mk()
	if !l.AllowAt(now) {
		t.Fatal("AllowAt(MaxInt64-3) on a full limiter denied")
	}
	if l.AllowAt(now) {
		t.Error("second AllowAt(MaxInt64-3) admitted past the burst")
	}
	if r, err := l.ReserveNAt(now, 1); err != nil || r.OK {
		t.Errorf("ReserveNAt after it = %+v, %v; want not OK (the next TAT passes the end)", r, err)
	}
	if r, err := mk().ReserveNAt(now, 1); err != nil || !r.OK || r.Wait != 0 {
		t.Errorf("ReserveNAt(MaxInt64-3) on a full limiter = %+v, %v; want OK at once", r, err)
	}
	if mk().AllowAt(now + 1) {
		t.Error("AllowAt(MaxInt64-2) admitted a TAT past the last one")
	}
	if r, err := mk().ReserveNAt(now+1, 1); err != nil || r.OK {
		t.Errorf("ReserveNAt(MaxInt64-2) = %+v, %v; want not OK", r, err)
	}
}
