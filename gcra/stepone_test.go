package gcra

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
	for _, c := range []struct {
		events int64
		period time.Duration
		burst  int64
	}{{1, 1, 1}, {3, time.Second, 7}, {10, time.Millisecond, 5}, {1, 1 << 40, 2}} {
		ps, err := NewParams(c.events, c.period, c.burst)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 20000 {
			s := State(r.Uint64())
			now := int64(r.Uint64())
			switch i % 4 {
			case 1:
				now = []int64{math.MinInt64, math.MaxInt64, 0, -1}[r.IntN(4)]
			case 2:
				s = 0
			}
			want, wr, _ := ps.Step(s, now, 1)
			got, ok := ps.StepOne(s, now)
			if ok != wr.OK || ok && got != want {
				t.Fatalf("%+v: StepOne(%d, %d) = %d %v, Step %d %v", c, s, now, got, ok, want, wr.OK)
			}
		}
	}
}
