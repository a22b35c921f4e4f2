package intmath

import (
	"math"
	"math/big"
	"math/rand/v2"
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

// TestMulDiv checks MulDiv against math/big on products past 64 bits, the
// largest quotient that fits, and the refusals.
func TestMulDiv(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	check := func(a, b, c uint64) {
		t.Helper()
		q, r, ok := MulDiv(a, b, c)
		if c == 0 {
			if ok || q != 0 || r != 0 {
				t.Fatalf("MulDiv(%d, %d, 0) = %d, %d, %v", a, b, q, r, ok)
			}
			return
		}
		var wq, wr big.Int
		wq.QuoRem(new(big.Int).Mul(new(big.Int).SetUint64(a), new(big.Int).SetUint64(b)), new(big.Int).SetUint64(c), &wr)
		fits := wq.IsUint64()
		if ok != fits || ok && (q != wq.Uint64() || r != wr.Uint64()) {
			t.Fatalf("MulDiv(%d, %d, %d) = %d, %d, %v; want %v, %v, %v", a, b, c, q, r, ok, &wq, &wr, fits)
		}
	}
	check(1<<20, 1<<44, 1<<20+1) // the product is 2^64
	check(math.MaxUint64, math.MaxUint64, math.MaxUint64)
	check(math.MaxUint64, math.MaxUint64, math.MaxUint64-1)
	check(math.MaxUint64, 2, 2)
	check(math.MaxUint64, 2, 1)
	check(5, 7, 0)
	for range 10000 {
		a, b, c := rng.Uint64()>>rng.IntN(64), rng.Uint64()>>rng.IntN(64), rng.Uint64()>>rng.IntN(64)
		check(a, b, c)
	}
}
