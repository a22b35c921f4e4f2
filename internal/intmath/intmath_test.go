package intmath

import (
	"math"
	"math/big"
	"testing"
)

func TestFloorDiv(t *testing.T) {
	for _, a := range []int64{math.MinInt64, math.MinInt64 + 1, -7, -6, -1, 0, 1, 6, 7, math.MaxInt64} {
		for _, b := range []uint64{1, 2, 3, 7, 1 << 62, math.MaxInt64} {
			want := new(big.Int)
			want.Div(big.NewInt(a), new(big.Int).SetUint64(b)) // Euclidean: floor for b > 0
			if got := FloorDiv(a, b); got != want.Int64() {
				t.Errorf("FloorDiv(%d, %d) = %d, want %s", a, b, got, want)
			}
		}
	}
}

func TestSatAdd(t *testing.T) {
	vals := []int64{math.MinInt64, math.MinInt64 + 1, -1 << 62, -1, 0, 1, 1 << 62, math.MaxInt64 - 1, math.MaxInt64}
	lo, hi := big.NewInt(math.MinInt64), big.NewInt(math.MaxInt64)
	for _, a := range vals {
		for _, b := range vals {
			want := new(big.Int).Add(big.NewInt(a), big.NewInt(b))
			if want.Cmp(hi) > 0 {
				want = hi
			} else if want.Cmp(lo) < 0 {
				want = lo
			}
			if got := SatAdd(a, b); got != want.Int64() {
				t.Errorf("SatAdd(%d, %d) = %d, want %s", a, b, got, want)
			}
		}
	}
}

func TestGCD(t *testing.T) {
	for _, c := range []struct{ a, b, want uint64 }{
		{0, 0, 0}, {7, 0, 7}, {0, 7, 7}, {12, 18, 6}, {18, 12, 6}, {17, 5, 1},
		{1e9, 3, 1}, {1 << 63, 1 << 40, 1 << 40}, {^uint64(0), ^uint64(0) / 3, ^uint64(0) / 3},
	} {
		if got := GCD(c.a, c.b); got != c.want {
			t.Errorf("GCD(%d, %d) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
