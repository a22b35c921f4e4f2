package slidelog

import (
	"math"
	"testing"
	"time"
)

// NewParams accepts the ends of its ranges: a Limit of 1 and of MaxLimit,
// and a window of 1 ns.
func TestNewParamsAcceptsTheBounds(t *testing.T) {
	for _, c := range []struct {
		lim    int64
		window time.Duration
	}{{1, time.Second}, {MaxLimit, time.Second}, {1, 1}, {MaxLimit, 1}} {
		p, err := NewParams(c.lim, c.window)
		if err != nil || p.Limit() != c.lim || p.Window() != c.window {
			t.Errorf("NewParams(%d, %v) = %+v, %v", c.lim, c.window, p, err)
		}
	}
}

// A denial's RetryAfter is the wait until the request fits, also in the
// first window of time, where a new Limiter's slots count as used at
// math.MinInt64: at MinInt64+k a request waits W-k.
func TestRetryAfterInTheFirstWindow(t *testing.T) {
	const w = int64(time.Second)
	lim := mustNew(t, 2, time.Duration(w))
	for _, k := range []int64{1, 7, w / 3, w - 1} {
		for _, n := range []int64{1, 2} {
			r, err := lim.AllowNAt(math.MinInt64+k, n)
			if err != nil || r.OK || r.RetryAfter != time.Duration(w-k) {
				t.Errorf("%d at MinInt64+%d: %+v, %v; want a denial with RetryAfter %v", n, k, r, err, time.Duration(w-k))
			}
		}
	}
}
