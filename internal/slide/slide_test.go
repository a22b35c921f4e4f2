package slide

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// fitsRef is Fits in big integers: Prev*(W-e) + (Cur+n)*W <= L*W.
func fitsRef(r Rule, s State, e, n uint64) bool {
	big64 := func(x uint64) *big.Int { return new(big.Int).SetUint64(x) }
	lhs := new(big.Int).Mul(big64(s.Prev), big64(r.W-e))
	lhs.Add(lhs, new(big.Int).Mul(big64(s.Cur+n), big64(r.W)))
	return lhs.Cmp(new(big.Int).Mul(big64(r.L), big64(r.W))) <= 0
}

// TestFitsExhaustiveSmall decides every small state, elapsed time and cost,
// among them every one whose estimate is exactly the limit, which random
// schedules almost never hit: there the unit must be admitted.
func TestFitsExhaustiveSmall(t *testing.T) {
	equal := 0
	for l := uint64(1); l <= 6; l++ {
		for w := uint64(1); w <= 8; w++ {
			r := New(l, w)
			for e := range w {
				for prev := range l + 1 {
					for cur := range l + 1 {
						for n := range l - cur + 1 {
							s := State{Prev: prev, Cur: cur}
							want := fitsRef(r, s, e, n)
							if got := r.Fits(s, e, n); got != want {
								t.Fatalf("L=%d W=%d e=%d %+v n=%d: Fits %v, want %v", l, w, e, s, n, got, want)
							}
							if prev*(w-e)+(cur+n)*w == l*w {
								equal++
							}
						}
					}
				}
			}
		}
	}
	if equal == 0 {
		t.Fatal("no case had the estimate exactly at the limit")
	}
}

// TestFitsAtEqualityWide puts the estimate exactly at the limit, and one
// unit of W above it, where L*W needs more than 64 bits.
func TestFitsAtEqualityWide(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		// Prev = L at half the window: Prev*(W-e) = L*W/2; with Cur+n =
		// L/2 (L and W even) the sum is L*W exactly.
		l := 2 * (1 + rng.Uint64N(1<<31-1))
		w := 2 * (1 + rng.Uint64N(1<<40))
		r := New(l, w)
		s := State{Prev: l, Cur: l/2 - 1}
		if !r.Fits(s, w/2, 1) || !fitsRef(r, s, w/2, 1) {
			t.Fatalf("L=%d W=%d: an estimate exactly at the limit was refused", l, w)
		}
		if r.Fits(s, w/2-1, 1) || fitsRef(r, s, w/2-1, 1) {
			t.Fatalf("L=%d W=%d: an estimate Prev/W above the limit was admitted", l, w)
		}
	}
}

// TestAfterEnds: the wait sums start - now and an offset of up to 2W, which
// passes 64 bits near the ends of int64, and a time past math.MaxInt64
// never comes.
func TestAfterEnds(t *testing.T) {
	const max, min = math.MaxInt64, math.MinInt64
	for _, c := range []struct {
		start int64
		at    uint64
		now   int64
		want  int64
	}{
		{0, 5, 0, 5},
		{10, 0, 3, 7},
		{0, 10, 3, 7},
		{max, 0, min, max},
		{0, 1<<63 + 1<<62, min, max}, // 2^63 + 2^63 + 2^62: wrapped to 2^62 before
		{max, 1 << 63, min, max},
		{max, math.MaxUint64, min, max},
		{min, 1 << 63, 0, 0},
		{min, 1<<63 + 7, 0, 7},
		{min, 0, max, 0},
		{min, math.MaxUint64, max, 0},
		{max, 0, max - 5, 5},
		{-1, 1<<63 - 1, -1, max},
		{-1, 1 << 63, -1, max},
		{max - 10, 5, max - 20, 15},
		{max - 10, 10, max - 20, 20},
		{max - 10, 11, max - 20, max}, // the time to act is past MaxInt64
		{max, 1, max, max},
	} {
		if got := After(c.start, c.at, c.now); got != c.want {
			t.Errorf("After(%d, %d, %d) = %d, want %d", c.start, c.at, c.now, got, c.want)
		}
	}
}
