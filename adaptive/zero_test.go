package adaptive

import (
	"testing"

	"github.com/cellrate/cellrate/internal/limittest"
)

// TestZeroThrottle: the zero Throttle rejects every request, at any now,
// with RejectProbability 1, and counts nothing; no method panics.
func TestZeroThrottle(t *testing.T) {
	var th Throttle
	for _, now := range limittest.ZeroTimes {
		th.AcceptedAt(now)
		if th.AllowAt(now) {
			t.Fatalf("AllowAt(%d) admitted", now)
		}
		if p := th.rejectProbabilityAt(now); p != 1 {
			t.Fatalf("rejectProbabilityAt(%d) = %v", now, p)
		}
		if r, a := th.countsAt(now); r != 0 || a != 0 {
			t.Fatalf("CountsAt(%d) = %d, %d", now, r, a)
		}
	}
	th.Accepted()
	if th.Allow() || th.RejectProbability() != 1 {
		t.Fatal("the plain methods on the zero Throttle")
	}
	if r, a := th.countsAt(th.now()); r != 0 || a != 0 {
		t.Fatalf("CountsAt(now) = %d, %d", r, a)
	}
}
