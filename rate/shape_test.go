package rate

import (
	"math"
	"testing"
)

// satSub saturates where a-b leaves int64 and is exact everywhere else.
func TestSatSub(t *testing.T) {
	for _, c := range []struct{ a, b, want int64 }{
		{5, 3, 2},
		{5, -3, 8},
		{-5, 3, -8},
		{-5, -3, -2},
		{7, 0, 7},
		{math.MinInt64 + 1, 1, math.MinInt64},
		{math.MinInt64 + 1, 2, math.MinInt64},
		{math.MinInt64, math.MaxInt64, math.MinInt64},
		{math.MaxInt64 - 1, -1, math.MaxInt64},
		{math.MaxInt64 - 1, -2, math.MaxInt64},
		{math.MaxInt64, math.MinInt64, math.MaxInt64},
		{-1, math.MaxInt64, math.MinInt64},
		{0, math.MinInt64 + 1, math.MaxInt64},
	} {
		if got := satSub(c.a, c.b); got != c.want {
			t.Errorf("satSub(%d, %d) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
