package striped

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cellrate/cellrate/internal/bucketcore"
)

// TestLines: the refill line's points against exact integer arithmetic
// (big.Int floor division), for random states of several rates, and their
// saturation at both ends of int64 time.
func TestLines(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	floor := func(t0 int64, num *big.Int, e int64) (int64, uint64) {
		q, r := new(big.Int).DivMod(num, big.NewInt(e), new(big.Int))
		q.Add(q, big.NewInt(t0))
		switch {
		case q.Cmp(big.NewInt(math.MaxInt64)) > 0:
			return math.MaxInt64, r.Uint64()
		case q.Cmp(big.NewInt(math.MinInt64)) < 0:
			return math.MinInt64, r.Uint64()
		}
		return q.Int64(), r.Uint64()
	}
	rates := []struct {
		events int64
		period time.Duration
		burst  int64
	}{{1, time.Second, 1}, {3, time.Second, 5}, {1000, time.Second, 50}, {7, 3 * time.Millisecond, 2}, {1, 1 << 40, 3}, {1 << 20, time.Nanosecond << 30, 1 << 20}}
	for _, sc := range rates {
		ps, err := bucketcore.NewParams(sc.events, sc.period, sc.burst)
		if err != nil {
			t.Fatal(err)
		}
		e, _ := ps.Rate()
		capU := ps.Burst() * ps.Unit()
		for range 200 {
			s := bucketcore.State{T: rng.Uint64(), Deficit: rng.Uint64N(1<<62 + 1)}
			if rng.IntN(2) == 0 {
				s.Deficit = rng.Uint64N(uint64(capU) + 1)
			}
			t0 := int64(s.T ^ 1<<63)
			d := new(big.Int).SetUint64(s.Deficit)
			wantEmpty, _ := floor(t0, new(big.Int).Sub(d, big.NewInt(capU)), e)
			wantFull, wantRem := floor(t0, d, e)
			if em, f, r := lines(&ps, s); em != wantEmpty || f != wantFull || r != wantRem {
				t.Fatalf("%+v lines(%v) = %d %d %d, want %d %d %d", sc, s, em, f, r, wantEmpty, wantFull, wantRem)
			}
		}
	}

	const lo, hi = math.MinInt64, math.MaxInt64
	ps, _ := bucketcore.NewParams(1, time.Second, 2)
	sec := int64(time.Second)
	s, _, _ := ps.Step(bucketcore.State{}, hi, 2)
	if e, f, r := lines(&ps, s); e != hi || f != hi || r != 0 {
		t.Fatalf("lines after emptying at MaxInt64: empty %d full %d rem %d", e, f, r)
	}
	if e, f, _ := lines(&ps, bucketcore.State{}); e != lo || f != lo {
		t.Fatalf("lines of a full bucket at MinInt64: empty %d full %d", e, f)
	}
	one, _, _ := ps.Step(bucketcore.State{}, lo+sec/2, 1)
	if e, f, _ := lines(&ps, one); e != lo || f != lo+sec+sec/2 {
		t.Fatalf("lines near MinInt64: empty %d full %d", e, f)
	}
}
