package ulule

import (
	"math/big"
	"testing"
	"time"
)

// untilFull is ceil((n-r)*period/n) ns, against math/big, for tokens that
// are and are not a whole number of ns.
func TestUntilFull(t *testing.T) {
	for _, n := range []int64{1, 3, 7, 10, 1000, 100000} {
		for _, p := range []time.Duration{time.Second, time.Hour, 333*time.Millisecond + 1, 24 * time.Hour} {
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
