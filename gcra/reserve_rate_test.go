package gcra

import (
	"math/big"
	"testing"
	"time"

	"github.com/cellrate/cellrate/internal/bound"
	"github.com/cellrate/cellrate/internal/race"
)

// reserveCase is a rate and burst, and the cost n of each reservation.
type reserveCase struct {
	events int64
	period time.Duration
	burst  int64
	n      int64
}

// chainReservations makes count reservations of c.n from a full limiter
// starting at start: all at start (queued, as many Waits at one instant
// would be), or each at the previous one's time to act (a caller that
// reserves again when it acts). It returns the times to act, and checks
// each against a Limiter driven by AllowNAt at the same times: a
// reservation must be exactly what polling every ns would get, refused at
// act-1 and admitted at act.
func chainReservations(t *testing.T, c reserveCase, start int64, count int, queued bool) (acts, waits []int64) {
	t.Helper()
	ps, err := NewParams(c.events, c.period, c.burst)
	if err != nil {
		t.Fatal(err)
	}
	poll, _ := NewFromParams(ps)
	var s State
	acts, waits = make([]int64, count), make([]int64, count)
	now := start
	for k := range acts {
		next, wait, ok, err := ps.Reserve(s, now, c.n)
		if err != nil || !ok {
			t.Fatalf("%+v: reservation %d refused: %v", c, k, err)
		}
		act := now + int64(wait)
		if wait > 0 {
			if r, _ := poll.AllowNAt(act-1, c.n); r.OK {
				t.Fatalf("%+v queued %v: reservation %d acts at %d, AllowNAt admits at %d", c, queued, k, act, act-1)
			}
		}
		if r, _ := poll.AllowNAt(act, c.n); !r.OK {
			t.Fatalf("%+v queued %v: reservation %d acts at %d, AllowNAt refuses then", c, queued, k, act)
		}
		if State(poll.tat.Load()) != next {
			t.Fatalf("%+v queued %v: reservation %d: state %d, AllowNAt's %d", c, queued, k, next, poll.tat.Load())
		}
		s, acts[k], waits[k] = next, act, int64(wait)
		if !queued {
			now = act
		}
	}
	uses := make([]bound.Use, min(len(acts), 2000)) // Check is O(n^2)
	for i, a := range acts[:len(uses)] {
		uses[i] = bound.Use{At: a, Cost: c.n}
	}
	if err := bound.Check(uses, uint64(c.burst), uint64(c.events), uint64(c.period)); err != nil {
		t.Fatalf("%+v queued %v: reserved events at their time to act: %v", c, queued, err)
	}
	return acts, waits
}

func chainLength() int {
	if race.Enabled { // pure: see package race
		return 3000
	}
	return 30000
}

// TestWaitingReservationsKeepRate: reservations of n < burst that wait keep
// the limiter busy (their time to act is n*T or more before the TAT), so
// they keep the exact rate with a fractional T: the k-th waiting
// reservation acts within 1 ns (the whole-ns rounding up of its time) of
// k*n*T after the first one that waited, for every k: no drift.
func TestWaitingReservationsKeepRate(t *testing.T) {
	for _, c := range []reserveCase{
		{3, time.Second, 2, 1}, // T = 333333333.33 ns
		{3, time.Second, 5, 4},
		{2, 3, 2, 1}, // T = 1.5 ns: steps of 1.5 ns
		{2, 3, 7, 3},
		{7, 10, 3, 2},       // T = 1.43 ns
		{3, 1e14 + 1, 2, 1}, // a third of a day and a bit
		{999983, time.Second, 3, 2},
	} {
		for _, queued := range []bool{true, false} {
			acts, waits := chainReservations(t, c, 1e12+1, chainLength(), queued)
			first := -1
			for k, a := range acts {
				if waits[k] == 0 {
					continue
				}
				if first < 0 {
					first = k
				}
				// |events*(act_k - act_first) - (k-first)*n*period| < events
				d := new(big.Int).Mul(big.NewInt(a-acts[first]), big.NewInt(c.events))
				d.Sub(d, new(big.Int).Mul(big.NewInt(int64(k-first)*c.n), big.NewInt(int64(c.period))))
				if d.CmpAbs(big.NewInt(c.events)) >= 0 {
					t.Fatalf("%+v queued %v: reservation %d acts at %d, %d after the first waiting one (%d): off k*n*T by %v/%d ns",
						c, queued, k, a, a-acts[first], first, d, c.events)
				}
			}
		}
	}
}

// TestWholeBurstReservations: a reservation of the whole burst (n ==
// burst: every reservation at burst 1) can act only when the limiter is
// full again, at the TAT rounded up to a whole ns, so each one is an idle
// restart (see the package doc). No limiter with the exact bound can keep
// the rate then when n*T is not whole: the events of two such reservations
// lie in a closed interval as long as the gap between them, so every gap
// must be at least n*T, and whole-ns gaps of at least n*T drift by
// ceil(n*T) - n*T or more per reservation. The test shows that (the
// schedule without drift breaks the exact bound, and holds it with 1 ns of
// slack) and that the reservations lose at most the restart's step on top:
// each gap is at least n*T and under n*T + step + 1 ns (a step is
// T/floor(T)). With T whole the gaps are exactly n*T.
func TestWholeBurstReservations(t *testing.T) {
	for _, c := range []reserveCase{
		{3, time.Second, 1, 1},
		{2, 3, 1, 1},
		{7, 10, 1, 1},
		{3, time.Second, 3, 3},
		{999983, time.Second, 1, 1},
		{2, 3, 2, 2}, // n*T = 3 ns, whole
		{1, 3, 1, 1}, // T whole
	} {
		ev, per := big.NewInt(c.events), big.NewInt(int64(c.period))
		nper := new(big.Int).Mul(per, big.NewInt(c.n)) // n*T*events
		fl := int64(c.period) / c.events               // floor(T): a step is T/fl
		whole := new(big.Int).Rem(nper, ev).Sign() == 0
		for _, queued := range []bool{true, false} {
			acts, _ := chainReservations(t, c, 1e12+1, chainLength(), queued)
			for k := 1; k < len(acts); k++ {
				gap := big.NewInt(acts[k] - acts[k-1])
				// events*gap >= n*period, and
				// events*gap*fl < n*period*fl + period + events*fl.
				lhs := new(big.Int).Mul(gap, ev)
				if lhs.Cmp(nper) < 0 {
					t.Fatalf("%+v queued %v: gap %d before reservation %d is under n*T", c, queued, gap, k)
				}
				hi := new(big.Int).Mul(nper, big.NewInt(fl))
				hi.Add(hi, per)
				hi.Add(hi, new(big.Int).Mul(ev, big.NewInt(fl)))
				if lhs.Mul(lhs, big.NewInt(fl)).Cmp(hi) >= 0 {
					t.Fatalf("%+v queued %v: gap %d before reservation %d: n*T + a step + 1 ns or more", c, queued, gap, k)
				}
				if c.period%time.Duration(c.events) == 0 && new(big.Int).Mul(gap, ev).Cmp(nper) != 0 {
					t.Fatalf("%+v queued %v: T is whole, gap %d before reservation %d", c, queued, gap, k)
				}
			}
			if whole {
				continue
			}
			// The schedule without drift, act_0 + ceil(k*n*T), breaks the
			// exact bound.
			ideal := make([]bound.Use, 100)
			for k := range ideal {
				q, r := new(big.Int).QuoRem(new(big.Int).Mul(big.NewInt(int64(k)), nper), ev, new(big.Int))
				if r.Sign() != 0 {
					q.Add(q, big.NewInt(1))
				}
				ideal[k] = bound.Use{At: acts[0] + q.Int64(), Cost: c.n}
			}
			if bound.Check(ideal, uint64(c.burst), uint64(c.events), uint64(c.period)) == nil {
				t.Fatalf("%+v: the schedule without drift holds the exact bound", c)
			}
			if err := bound.CheckSlack(ideal, uint64(c.burst), 1, uint64(c.events), uint64(c.period)); err != nil {
				t.Fatalf("%+v: the schedule without drift, with 1 ns of slack: %v", c, err)
			}
		}
	}
}
