package slide

import (
	"math"
	"math/big"
	"testing"
)

// The reference model: every rule of the package doc in big integers, so
// that no wrap-around of int64 or uint64 can hide in it. Times are exact
// integers; a state's window starts at Start.

func bi(x int64) *big.Int  { return big.NewInt(x) }
func bu(x uint64) *big.Int { return new(big.Int).SetUint64(x) }

// advanceRef is Advance's doc: a counter with both counts zero restarts at
// now; a now before Start is "back" that far; within the window it is e in
// [0, W); in the next window the counter rotates if Cur has units; later,
// or with Cur empty, it restarts at now.
func advanceRef(r Rule, s State, now int64) (State, *big.Int, *big.Int) {
	zero := new(big.Int)
	if s.Prev == 0 && s.Cur == 0 {
		return State{Start: now}, zero, zero
	}
	e := new(big.Int).Sub(bi(now), bi(s.Start))
	w := bu(r.W)
	switch {
	case e.Sign() < 0:
		return s, zero, new(big.Int).Neg(e)
	case e.Cmp(w) < 0:
		return s, e, zero
	case e.Cmp(new(big.Int).Lsh(w, 1)) < 0 && s.Cur != 0:
		// Start+W fits in int64 here: Start <= now-W.
		return State{Start: s.Start + int64(r.W), Prev: s.Cur}, e.Sub(e, w), zero
	}
	return State{Start: now}, zero, zero
}

// remainingRef is L - ceil(Prev*(W-e)/W) - Cur, at least 0.
func remainingRef(r Rule, s State, e uint64) int64 {
	num := new(big.Int).Mul(bu(s.Prev), bu(r.W-e))
	w := bu(r.W)
	share := new(big.Int).Div(new(big.Int).Add(num, new(big.Int).Sub(w, big.NewInt(1))), w)
	left := new(big.Int).Sub(bu(r.L), share)
	left.Sub(left, bu(s.Cur))
	if left.Sign() < 0 {
		return 0
	}
	return left.Int64()
}

// fitsAtRef reports whether n more units fit at offset x from s.Start if
// nothing else is admitted: before W the estimate is Prev*(W-x)/W + Cur;
// from W on Cur has become Prev; from 2W on nothing is counted.
func fitsAtRef(r Rule, s State, x, n uint64) bool {
	switch {
	case x < r.W:
		return fitsRef(r, s, x, n)
	case x < 2*r.W:
		return fitsRef(r, State{Prev: s.Cur}, x-r.W, n)
	}
	return n <= r.L
}

// waitRef is the least offset at which n units fit, by search.
func waitRef(r Rule, s State, n uint64) uint64 {
	for x := uint64(0); ; x++ {
		if fitsAtRef(r, s, x, n) {
			return x
		}
	}
}

// forSmall calls f with every rule and state up to small bounds.
func forSmall(f func(r Rule, s State)) {
	for l := uint64(1); l <= 4; l++ {
		for w := uint64(1); w <= 5; w++ {
			r := New(l, w)
			for prev := range l + 1 {
				for cur := range l + 1 {
					f(r, State{Start: 100, Prev: prev, Cur: cur})
				}
			}
		}
	}
}

func TestNew(t *testing.T) {
	r := New(math.MaxUint32, math.MaxUint64)
	hi, lo := r.lwHi, r.lwLo
	want := new(big.Int).Mul(bu(math.MaxUint32), bu(math.MaxUint64))
	got := new(big.Int).Add(new(big.Int).Lsh(bu(hi), 64), bu(lo))
	if r.L != math.MaxUint32 || r.W != math.MaxUint64 || got.Cmp(want) != 0 {
		t.Fatalf("New(2^32-1, 2^64-1) = %+v, want L*W = %v", r, want)
	}
}

// TestAdvanceSmall: every small state at every time from 3 windows before
// its start to 3 after.
func TestAdvanceSmall(t *testing.T) {
	forSmall(func(r Rule, s State) {
		for d := -3 * int64(r.W); d <= 3*int64(r.W); d++ {
			now := s.Start + d
			gs, ge, gb := r.Advance(s, now)
			ws, we, wb := advanceRef(r, s, now)
			if gs != ws || bu(ge).Cmp(we) != 0 || bu(gb).Cmp(wb) != 0 {
				t.Fatalf("L=%d W=%d: Advance(%+v, %d) = %+v, %d, %d; want %+v, %v, %v", r.L, r.W, s, now, gs, ge, gb, ws, we, wb)
			}
		}
	})
}

// TestAdvanceEdges: starts and times at both ends of int64, where now-Start
// passes 64 bits signed.
func TestAdvanceEdges(t *testing.T) {
	times := []int64{math.MinInt64, math.MinInt64 + 1, -1, 0, 1, math.MaxInt64 - 1, math.MaxInt64}
	for _, w := range []uint64{1, 2, 1 << 62, math.MaxInt64} {
		r := New(3, w)
		for _, start := range times {
			for _, now := range times {
				for _, s := range []State{{Start: start, Prev: 1, Cur: 2}, {Start: start, Prev: 0, Cur: 1}, {Start: start, Prev: 1}, {Start: start}} {
					gs, ge, gb := r.Advance(s, now)
					ws, we, wb := advanceRef(r, s, now)
					if gs != ws || bu(ge).Cmp(we) != 0 || bu(gb).Cmp(wb) != 0 {
						t.Fatalf("W=%d: Advance(%+v, %d) = %+v, %d, %d; want %+v, %v, %v", w, s, now, gs, ge, gb, ws, we, wb)
					}
				}
			}
		}
	}
}

func TestCount(t *testing.T) {
	s := State{Prev: 1, Cur: 2}
	s.Count(0, 3)
	if s != (State{Prev: 1, Cur: 5}) {
		t.Fatalf("Count(0, 3) = %+v, want the units in Cur", s)
	}
	s.Count(1, 4)
	if s != (State{Prev: 5, Cur: 5}) {
		t.Fatalf("Count(1, 4) = %+v, want the units in Prev", s)
	}
}

// TestRemainingSmall: every small state at every elapsed time.
func TestRemainingSmall(t *testing.T) {
	forSmall(func(r Rule, s State) {
		for e := range r.W {
			if got, want := r.Remaining(s, e), remainingRef(r, s, e); got != want {
				t.Fatalf("L=%d W=%d: Remaining(%+v, %d) = %d, want %d", r.L, r.W, s, e, got, want)
			}
		}
	})
}

// TestWaitSmall: for every small state, cost and elapsed time at which the
// cost does not fit, Wait is the least offset at which it does, and after e.
func TestWaitSmall(t *testing.T) {
	checked := 0
	forSmall(func(r Rule, s State) {
		for n := uint64(1); n <= r.L; n++ {
			want := waitRef(r, s, n)
			for e := range r.W {
				if r.Fits(s, e, n) {
					continue
				}
				checked++
				if got := r.Wait(s, n); got != want || got <= e || got > 2*r.W {
					t.Fatalf("L=%d W=%d: Wait(%+v, %d) = %d, want %d (not fitting at %d)", r.L, r.W, s, n, got, want, e)
				}
			}
		}
	})
	if checked == 0 {
		t.Fatal("no case was waited for")
	}
}

// decideRef is Decide's doc on the reference pieces.
func decideRef(r Rule, s State, now int64, n uint64) Decision {
	s, eb, backb := advanceRef(r, s, now)
	if backb.Cmp(bu(r.W)) > 0 {
		d := Decision{Next: s, OK: n == 0, Base: s.Start - int64(r.W)}
		if n != 0 && !fitsRef(r, s, 0, n) {
			d.Base, d.Off = s.Start, waitRef(r, s, n)
		}
		return d
	}
	e := eb.Uint64()
	if n != 0 && !fitsRef(r, s, e, n) {
		return Decision{Next: s, Left: remainingRef(r, s, e), Base: s.Start, Off: waitRef(r, s, n)}
	}
	if backb.Sign() != 0 {
		s.Prev += n
	} else {
		s.Cur += n
	}
	return Decision{Next: s, OK: true, Left: remainingRef(r, s, e)}
}

// TestDecideSmall: every small state and cost at every time from 3
// windows before its start to 3 after.
func TestDecideSmall(t *testing.T) {
	oks, stale := 0, 0
	forSmall(func(r Rule, s State) {
		for n := range r.L + 1 {
			for d := -3 * int64(r.W); d <= 3*int64(r.W); d++ {
				now := s.Start + d
				got, want := r.Decide(s, now, n), decideRef(r, s, now, n)
				if got != want {
					t.Fatalf("L=%d W=%d: Decide(%+v, %d, %d) = %+v, want %+v", r.L, r.W, s, now, n, got, want)
				}
				if got.OK && n != 0 {
					oks++
					if d < 0 {
						stale++
					}
				}
			}
		}
	})
	if oks == 0 || stale == 0 {
		t.Fatalf("%d admissions, %d of them stale: want both", oks, stale)
	}
}

func TestEstimate(t *testing.T) {
	r := New(10, 4)
	for _, tc := range []struct {
		s    State
		e    uint64
		want float64
	}{
		{State{Prev: 4, Cur: 1}, 0, 5},
		{State{Prev: 4, Cur: 1}, 1, 4},
		{State{Prev: 4, Cur: 1}, 3, 2},
		{State{Prev: 8}, 2, 4},
	} {
		if got := r.Estimate(tc.s, tc.e); got != tc.want {
			t.Errorf("Estimate(%+v, %d) = %v, want %v", tc.s, tc.e, got, tc.want)
		}
	}
}

// TestAfterWithin: start+at-now where it fits in int64 and at is not
// before now (the ends of int64 are TestAfterEnds's).
func TestAfterWithin(t *testing.T) {
	for _, c := range []struct {
		start int64
		at    uint64
		now   int64
		want  int64
	}{
		{0, 5, 0, 5},
		{10, 0, 3, 7},
		{0, 10, 3, 7},
		{10, 5, 15, 0},
		{-10, 30, 3, 17},
		{math.MaxInt64, 0, math.MaxInt64 - 5, 5},
		{math.MaxInt64 - 10, 5, math.MaxInt64 - 20, 15},
		{math.MinInt64, 1<<63 + 7, 0, 7},
	} {
		if got := After(c.start, c.at, c.now); got != c.want {
			t.Errorf("After(%d, %d, %d) = %d, want %d", c.start, c.at, c.now, got, c.want)
		}
	}
}
