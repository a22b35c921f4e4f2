package slidelog

import (
	"testing"

	"github.com/cellrate/cellrate/internal/limittest"
)

// TestZeroLimiter: the zero Limiter has limit 0 and admits nothing, with the
// plain methods reading nanotime.Now.
func TestZeroLimiter(t *testing.T) {
	var l Limiter
	limittest.ZeroLimiter(t, "slidelog.Limiter", &l)
	for _, now := range limittest.ZeroTimes {
		if got := l.RemainingAt(now); got != 0 {
			t.Fatalf("RemainingAt(%d) = %d", now, got)
		}
	}
	if l.Allow() || l.Remaining() != 0 {
		t.Fatal("the plain methods on the zero Limiter")
	}
	if r, err := l.AllowN(1); r.OK || err == nil {
		t.Fatalf("AllowN(1) = %+v, %v", r, err)
	}
	if l.Params().Limit() != 0 || l.Params().Window() != 0 {
		t.Fatalf("Params() = %+v", l.Params())
	}
}
