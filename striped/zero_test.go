package striped

import (
	"testing"

	"github.com/cellrate/cellrate/internal/limittest"
)

// TestZeroLimiter: the zero Limiter has burst 0 and admits nothing by any
// method, reads nanotime.Now, and grows no cache table.
func TestZeroLimiter(t *testing.T) {
	var l Limiter
	limittest.ZeroMember(t, "striped.Limiter", &l)
	for _, now := range limittest.ZeroTimes {
		if l.RemainingAt(now) != 0 || l.TokensAt(now) != 0 {
			t.Fatalf("at %d: Remaining %d, Tokens %v", now, l.RemainingAt(now), l.TokensAt(now))
		}
	}
	if l.Allow() || l.Remaining() != 0 || l.Tokens() != 0 {
		t.Fatal("the plain methods on the zero Limiter")
	}
	if r, err := l.AllowN(1); r.OK || err == nil {
		t.Fatalf("AllowN(1) = %+v, %v", r, err)
	}
	if l.caches.get(0) != nil {
		t.Fatal("the zero Limiter grew a cache")
	}
}
