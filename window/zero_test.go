package window

import (
	"testing"

	"github.com/cellrate/cellrate/internal/limittest"
)

// TestZeroLimiterMember: the zero Limiter has limit 0 and admits nothing by
// any method, with the plain methods reading nanotime.Now.
func TestZeroLimiterMember(t *testing.T) {
	var l Limiter
	limittest.ZeroMember(t, "window.Limiter", &l)
	for _, now := range limittest.ZeroTimes {
		if l.RemainingAt(now) != 0 || l.EstimateAt(now) != 0 {
			t.Fatalf("at %d: Remaining %d, Estimate %v", now, l.RemainingAt(now), l.EstimateAt(now))
		}
	}
	if l.Allow() || l.Remaining() != 0 || l.Estimate() != 0 {
		t.Fatal("the plain methods on the zero Limiter")
	}
}
