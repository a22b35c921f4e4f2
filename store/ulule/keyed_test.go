package ulule

import (
	"math/big"
	"testing"
	"time"
)

// untilFull is ceil((n-r)*period/n) ns, against math/big, for tokens that
// are and are not a whole number of ns (3<<20 per 1<<44 ns is not, though
// its product, 3<<64, wraps to 0 in 64 bits).
func TestUntilFull(t *testing.T) {
	for _, n := range []int64{1, 3, 7, 10, 1000, 100000, 3 << 20} {
		for _, p := range []time.Duration{time.Second, time.Hour, 333*time.Millisecond + 1, 24 * time.Hour, 1 << 44} {
			tb, err := newTable(n, p, 4)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range []int64{0, 1, n / 2, n - 1, n, n + 1} {
				d := big.NewInt(max(n-r, 0))
				d.Mul(d, big.NewInt(int64(p)))
				q, m := new(big.Int).DivMod(d, big.NewInt(n), new(big.Int))
				if m.Sign() != 0 {
					q.Add(q, big.NewInt(1))
				}
				if got := tb.untilFull(r); got != q.Int64() {
					t.Fatalf("%d per %v, %d remaining: untilFull = %d, want %d", n, p, r, got, q.Int64())
				}
			}
		}
	}
}

// wholeToken is period/n exactly when n divides period, and 0 otherwise,
// also where period*n wraps to 0 in 64 bits.
func TestWholeToken(t *testing.T) {
	for _, c := range []struct{ period, n, want uint64 }{
		{1e9, 1, 1e9},
		{1e9, 4, 25e7},
		{1e9, 3, 0},
		{1, 2, 0},
		{1 << 44, 1 << 20, 1 << 24},
		{1 << 44, 3 << 20, 0}, // the product is 3<<64
		{1 << 32, 3 << 32, 0}, // n over period
		{3 << 61, 40, 0},      // the product is 15<<64
		{3 << 61, 3 << 3, 1 << 58},
	} {
		if got := wholeToken(c.period, c.n); got != c.want {
			t.Errorf("wholeToken(%d, %d) = %d, want %d", c.period, c.n, got, c.want)
		}
	}
}
