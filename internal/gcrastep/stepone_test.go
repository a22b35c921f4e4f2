package gcrastep

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// TestStepOne: StepOne decides as Step(s, now, 1) does, state and all, at
// random states and times and at both ends of int64 time.
func TestStepOne(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	n := 20000
	if testing.Short() {
		n = 4000
	}
	for _, c := range []struct {
		events int64
		period time.Duration
		burst  int64
	}{{1, 1, 1}, {3, time.Second, 7}, {10, time.Millisecond, 5}, {1, 1 << 40, 2}, {100, time.Second, 100}, {1, 3, 1 << 20}, {2, 3, 5}} {
		ps, err := NewParams(c.events, c.period, c.burst)
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			s := State(r.Uint64())
			now := int64(r.Uint64())
			switch i % 6 {
			case 1:
				now = []int64{math.MinInt64, math.MaxInt64, 0, -1}[r.IntN(4)]
			case 2:
				s = 0
			case 3, 4:
				// A TAT within a burst and a step or two of now, where
				// admissions turn into waits and restarts.
				if i%6 == 4 {
					now = []int64{math.MinInt64, math.MaxInt64}[r.IntN(2)]
				}
				s = State(uint64(now) ^ signBit + nearNow(r, ps))
			}
			want, wr, _ := ps.Step(s, now, 1)
			got, ok := ps.StepOne(s, now)
			if ok != wr.OK || ok && got != want {
				t.Fatalf("%+v: StepOne(%d, %d) = %d %v, Step %d %v", c, s, now, got, ok, want, wr.OK)
			}
		}
	}
}

// nearNow returns a TAT offset from now, in steps: within a burst and two
// events of it, often on the edges where a decision turns (now, a full
// burst ahead less one event, a full burst ahead) give or take a step.
func nearNow(r *rand.Rand, ps Params) uint64 {
	bj, j := int64(ps.BJ), int64(ps.J)
	if r.IntN(2) == 0 {
		d := bj + 2*j + 2
		return uint64(r.Int64N(2*d+1) - d)
	}
	edge := []int64{0, bj - j, bj, -j}[r.IntN(4)]
	return uint64(edge + r.Int64N(3) - 1)
}
