package gcrastep

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/cellrate/cellrate/limit"
)

// TestBurstBounds: a burst of 1 is accepted by both constructors and 0 is
// refused, and the largest burst is exactly the one whose burst*period/events
// is at most 2^62 ns: a quotient of 2^62 with a remainder is refused, one
// without is accepted, as is one step below.
func TestBurstBounds(t *testing.T) {
	if _, err := RateParams(1, 1); err != nil {
		t.Errorf("RateParams(1, 1): %v", err)
	}
	var pe *limit.ParamError
	if _, err := RateParams(1, 0); !errors.As(err, &pe) || pe.Param != "burst" {
		t.Errorf("RateParams(1, 0): %v, want a burst ParamError", err)
	}
	const b = 3074457345618258603 // 3b = 2^63 + 1: b*3/2 = 2^62 remainder 1
	for _, c := range []struct {
		events int64
		period time.Duration
		burst  int64
		ok     bool
	}{
		{2, 3, 1, true},      // 3/2 ns: a remainder far below the bound
		{2, 3, b - 1, true},  // 2^62 - 1 ns, remainder 1
		{2, 3, b, false},     // 2^62 ns, remainder 1
		{2, 3, b + 1, false}, // past 2^62 ns
		{1, 1 << 62, 1, true},
		{1, 1<<62 + 1, 1, false},
		{1, 1 << 61, 2, true},
		{1, 1 << 61, 3, false},
	} {
		_, err := NewParams(c.events, c.period, c.burst)
		if (err == nil) != c.ok {
			t.Errorf("NewParams(%d, %d, %d): %v, want ok %v", c.events, c.period, c.burst, err, c.ok)
		}
		if err != nil && (!errors.As(err, &pe) || pe.Param != "burst") {
			t.Errorf("NewParams(%d, %d, %d): %v, want a burst ParamError", c.events, c.period, c.burst, err)
		}
	}
}

// TestFullAtIsTheLargestFullState: FullAt(now) has the whole burst at now
// and the State after it does not, at times on both sides of 0.
func TestFullAtIsTheLargestFullState(t *testing.T) {
	for _, c := range [][3]int64{{1, 1, 1}, {3, int64(time.Second), 7}, {2, 3, 5}, {1, 1 << 40, 2}} {
		ps, err := NewParams(c[0], time.Duration(c[1]), c[2])
		if err != nil {
			t.Fatal(err)
		}
		for _, now := range []int64{math.MinInt64 + 5, -1e18, -12345, -1, 0, 1, 7, 1e9 + 3, 1e18, math.MaxInt64 - 5} {
			s := ps.FullAt(now)
			if got := ps.RemainingAt(s, now); got != ps.Burst() {
				t.Errorf("%v: RemainingAt(FullAt(%d)) = %d, want %d", c, now, got, ps.Burst())
			}
			if got := ps.RemainingAt(s+1, now); got >= ps.Burst() {
				t.Errorf("%v: RemainingAt(FullAt(%d)+1) = %d, want below %d", c, now, got, ps.Burst())
			}
		}
	}
}

// TestReserveErrors: Reserve returns Step's errors for a negative cost and
// a cost above the burst, with the state unchanged and ok false.
func TestReserveErrors(t *testing.T) {
	ps, err := NewParams(1, time.Second, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		n    int64
		want error
	}{{-1, limit.ErrNegativeCost}, {4, limit.ErrCostExceedsBurst}} {
		next, wait, ok, err := ps.Reserve(0, 1e9, c.n)
		if !errors.Is(err, c.want) || ok || next != 0 || wait != 0 {
			t.Errorf("Reserve(n=%d) = %d, %v, %v, %v; want 0, 0, false, %v", c.n, next, wait, ok, err, c.want)
		}
	}
}
