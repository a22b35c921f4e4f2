package golimiter

import (
	"context"
	"errors"
	"math/big"
	"testing"
	"time"

	"github.com/cellrate/cellrate/limit"
)

// untilFull is ceil((n-r)*period/n) ns, against math/big, for tokens that
// are and are not a whole number of ns. The last pair's product wraps to 0
// in 64 bits though its token is not a whole number of ns (2^32*5/(2^32*3)).
func TestUntilFull(t *testing.T) {
	pairs := []struct {
		n []int64
		p []time.Duration
	}{
		{[]int64{1, 3, 7, 10, 1000, 100000}, []time.Duration{time.Second, time.Hour, 333*time.Millisecond + 1, 24 * time.Hour}},
		{[]int64{3 << 32}, []time.Duration{5 << 32}},
	}
	for _, c := range pairs {
		untilFullOf(t, c.n, c.p)
	}
}

func untilFullOf(t *testing.T, ns []int64, ps []time.Duration) {
	t.Helper()
	for _, n := range ns {
		for _, p := range ps {
			tb, err := newTable(uint64(n), p, 4)
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
				if got := tb.untilFull(uint64(r)); got != q.Int64() {
					t.Fatalf("%d per %v, %d remaining: untilFull = %d, want %d", n, p, r, got, q.Int64())
				}
			}
		}
	}
}

// Tokens go up to 2^62 (one a nanosecond over 2^62ns, the longest interval
// keyed takes); one more is refused, by New and by Set, naming tokens and
// the value given rather than a clamped one.
func TestTokensBound(t *testing.T) {
	const most = uint64(1 << 62)
	s := newStore(t, &Config{Tokens: most, Interval: 1 << 62})
	ctx := context.Background()
	if l, r, _, ok, err := s.Take(ctx, "k"); l != most || r != most-1 || !ok || err != nil {
		t.Fatalf("Take = %d, %d, _, %v, %v; want %d, %d, _, true, nil", l, r, ok, err, most, most-1)
	}
	for _, tokens := range []uint64{most + 1, 1 << 63, ^uint64(0)} {
		_, err := New(&Config{Tokens: tokens, Interval: 1 << 62})
		wantTokensErr(t, "New", err, tokens)
		wantTokensErr(t, "Set", s.Set(ctx, "k", tokens, 1<<62), tokens)
	}
}

func wantTokensErr(t *testing.T, call string, err error, tokens uint64) {
	t.Helper()
	var pe *limit.ParamError
	if !errors.As(err, &pe) || pe.Param != "tokens" || pe.Value != tokens {
		t.Fatalf("%s with %d tokens per 2^62ns = %v, want a *limit.ParamError for tokens %d", call, tokens, err, tokens)
	}
}
