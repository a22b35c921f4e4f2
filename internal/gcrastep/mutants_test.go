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
		{1, 1 << 40, 1 << 30, false}, // burst*period/events past 64 bits
		{1, math.MaxInt64, math.MaxInt64, false},
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

// TestIntervalAndOneNs: Interval is period/events rounded down (0 for the
// zero Params), and OneNs holds exactly when the interval is whole ns.
func TestIntervalAndOneNs(t *testing.T) {
	var zero Params
	if zero.Interval() != 0 || zero.OneNs() {
		t.Errorf("zero Params: Interval %v OneNs %v, want 0 false", zero.Interval(), zero.OneNs())
	}
	for _, c := range []struct {
		events   int64
		period   time.Duration
		interval time.Duration
		oneNs    bool
	}{{1, 5, 5, true}, {3, time.Second, 333333333, false}, {2, 3, 1, false}, {4, 12, 3, true}} {
		ps, err := NewParams(c.events, c.period, 1)
		if err != nil {
			t.Fatal(err)
		}
		if ps.Interval() != c.interval || ps.OneNs() != c.oneNs {
			t.Errorf("NewParams(%d, %d): Interval %v OneNs %v, want %v %v", c.events, c.period, ps.Interval(), ps.OneNs(), c.interval, c.oneNs)
		}
	}
}

// TestZeroFullAt: the zero Params' FullAt is the largest State (every State
// has its burst of 0).
func TestZeroFullAt(t *testing.T) {
	var zero Params
	if got := zero.FullAt(5); got != ^State(0) {
		t.Errorf("zero FullAt = %d, want %d", got, ^State(0))
	}
}

// TestSettleNeverAdmitsZeroSteps: a request of 0 steps is not admitted,
// even by a limiter that has been full since long before now.
func TestSettleNeverAdmitsZeroSteps(t *testing.T) {
	ps, err := NewParams(1, 10, 5)
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := ps.Settle(0, ps.At(1e9, 0), 0, false); ok || s != 0 {
		t.Errorf("Settle of 0 steps = %d, %v; want 0, false", s, ok)
	}
}

// TestConvert: a TAT ahead of now carries its owed events over at the new
// interval, one not ahead is kept as a time, the result is rounded up to a
// step of the new Params and capped, and the zero Params convert to 0.
// now is MinInt64+100, 100 ns in State's (biased) time.
func TestConvert(t *testing.T) {
	mk := func(events int64, period time.Duration) *Params {
		ps, err := NewParams(events, period, 5)
		if err != nil {
			t.Fatal(err)
		}
		return &ps
	}
	const now = math.MinInt64 + 100
	from := mk(1, 10) // steps of 1 ns, 10 a event
	to20 := mk(1, 20) // steps of 1 ns, 20 a event
	to3 := mk(3, 10)  // steps of 10/9 ns, 3 a event
	var zero Params
	for _, c := range []struct {
		ps   *Params
		x    State
		to   *Params
		most uint64
		want State
	}{
		{from, 130, to20, 1000, 160}, // 3 events owed: 60 ns at 20 ns each
		{from, 100, to20, 1000, 100}, // none owed
		{from, 50, to20, 1000, 50},   // full since 50
		{from, 130, to20, 150, 150},  // capped
		{from, 50, to3, 1000, 45},    // 50 ns is 45 steps of 10/9 ns
		{from, 51, to3, 1000, 46},    // 51 ns is 45.9 steps: rounded up
		{from, 130, to3, 1000, 99},   // 3 events owed: 10 ns, to 110 ns
		{&zero, 130, to20, 1000, 0},  // a limiter that never admitted: full
	} {
		if got := c.ps.Convert(c.x, now, c.to, c.most); got != c.want {
			t.Errorf("Convert(%d, most %d) = %d, want %d", c.x, c.most, got, c.want)
		}
	}
}
