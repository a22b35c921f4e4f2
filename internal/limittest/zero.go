package limittest

import (
	"errors"
	"math"
	"testing"

	"github.com/cellrate/cellrate/limit"
)

// ZeroTimes are the nows a zero-value test asks at: both ends of time and
// between.
var ZeroTimes = []int64{math.MinInt64, -1, 0, 1, 3_600_000_000_000, math.MaxInt64}

// ZeroLimiter checks the documented meaning of a zero value with burst 0:
// at every ZeroTimes it admits nothing, refusing n = 1 and n = 2 with
// limit.ErrCostExceedsBurst and RetryAfter limit.Never, admits n = 0 with
// Remaining 0, and a negative n is limit.ErrNegativeCost.
func ZeroLimiter(t *testing.T, name string, l limit.Limiter) {
	t.Helper()
	for _, now := range ZeroTimes {
		if l.AllowAt(now) {
			t.Fatalf("the zero %s: AllowAt(%d) admitted", name, now)
		}
		for _, n := range []int64{1, 2} {
			if r, err := l.AllowNAt(now, n); r.OK || r.RetryAfter != limit.Never || !errors.Is(err, limit.ErrCostExceedsBurst) {
				t.Fatalf("the zero %s: AllowNAt(%d, %d) = %+v, %v", name, now, n, r, err)
			}
		}
		if r, err := l.AllowNAt(now, 0); !r.OK || r.Remaining != 0 || err != nil {
			t.Fatalf("the zero %s: AllowNAt(%d, 0) = %+v, %v", name, now, r, err)
		}
		if r, err := l.AllowNAt(now, -1); r.OK || !errors.Is(err, limit.ErrNegativeCost) {
			t.Fatalf("the zero %s: AllowNAt(%d, -1) = %+v, %v", name, now, r, err)
		}
	}
}

// ZeroMember is ZeroLimiter for a limit.Member: TakeAt refuses as AllowNAt
// with the zero Receipt, and a Refund of any Receipt (zero, or forged with
// the zero words as After) leaves it admitting nothing.
func ZeroMember(t *testing.T, name string, m limit.Member) {
	t.Helper()
	ZeroLimiter(t, name, m)
	for _, now := range ZeroTimes {
		if r, rc, err := m.TakeAt(now, 1); r.OK || rc != (limit.Receipt{}) || !errors.Is(err, limit.ErrCostExceedsBurst) {
			t.Fatalf("the zero %s: TakeAt(%d, 1) = %+v, %+v, %v", name, now, r, rc, err)
		}
		if r, rc, err := m.TakeAt(now, 0); !r.OK || rc != (limit.Receipt{}) || err != nil {
			t.Fatalf("the zero %s: TakeAt(%d, 0) = %+v, %+v, %v", name, now, r, rc, err)
		}
	}
	m.Refund(limit.Receipt{})
	m.Refund(limit.Receipt{At: 0, N: 1, Before: [2]uint64{1, 1}})
	ZeroLimiter(t, name, m)
}
