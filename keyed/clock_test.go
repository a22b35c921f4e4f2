package keyed

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestLaggingClockBound: with a clock lagging the real time by up to L
// (as a nanotime.Coarse does), a key's admissions counted at their real
// times stay within WithClock's stretched bound; a bucket's pass the bound
// without the stretch (so the stretch is needed, and this test can see a
// wrong one).
func TestLaggingClockBound(t *testing.T) {
	const lag = 30 * time.Millisecond
	for _, window := range []bool{false, true} {
		r := rand.New(rand.NewPCG(7, 7))
		var real, c int64
		clock := func() int64 { return c }
		var tb *Table
		var err error
		if window {
			tb, err = NewWindow(3, 300*time.Millisecond, WithClock(clock), WithCapacity(4))
		} else {
			tb, err = New(10, time.Second, 3, WithClock(clock), WithCapacity(4))
		}
		if err != nil {
			t.Fatal(err)
		}
		var at []int64 // real times of admissions
		for i := range 20000 {
			real += r.Int64N(int64(5 * time.Millisecond))
			if i%64 == 0 {
				real += int64(time.Second) // idle: a full burst again
			}
			c = max(c, real-int64(lag)*r.Int64N(2)) // the lag at its ends
			if tb.Allow("k") {
				at = append(at, real)
			}
		}
		stretched := func(d int64) int64 {
			if window {
				return 3 * ((d+int64(lag)+int64(300*time.Millisecond)-1)/int64(300*time.Millisecond) + 1)
			}
			return 3 + 10*(d+int64(lag))/int64(time.Second)
		}
		unstretched := func(d int64) int64 {
			if window {
				return 3 * ((d+int64(300*time.Millisecond)-1)/int64(300*time.Millisecond) + 1)
			}
			return 3 + 10*d/int64(time.Second)
		}
		exceeded := false
		for i := range at {
			for j := i; j < len(at) && j < i+64; j++ {
				n, d := int64(j-i+1), at[j]-at[i]
				if n > stretched(d) {
					t.Fatalf("window=%v: %d admitted in %v of real time, bound with lag %v is %d", window, n, time.Duration(d), lag, stretched(d))
				}
				exceeded = exceeded || n > unstretched(d)
			}
		}
		if !exceeded && !window { // the window's bound is looser than its limiter
			t.Errorf("window=%v: the bound without the lag was never exceeded: the lag was not exercised", window)
		}
	}
}
