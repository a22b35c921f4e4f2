package redis

import (
	"cmp"
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// admission is n units admitted at a time in [from, at]: a caller on a
// loaded machine knows its decision's time only within its call (from,
// read before it; 0 when at is the time itself, as with a clock the test
// drives).
type admission struct{ at, n, from int64 }

func (a admission) lo() int64 {
	if a.from == 0 {
		return a.at
	}
	return a.from
}

// checkBound fails t if the units certainly admitted within some closed
// interval [a, b] (those with [from, at] inside it) exceed bound(b-a),
// exactly (bound compares in big ints). With exact times it checks every
// interval between two admissions.
func checkBound(t *testing.T, adm []admission, over func(sum, span int64) bool) {
	t.Helper()
	if msg := boundExcess(adm, over); msg != "" {
		t.Fatal(msg)
	}
}

// boundExcess is checkBound's check: what went over, or "".
func boundExcess(adm []admission, over func(sum, span int64) bool) string {
	slices.SortStableFunc(adm, func(x, y admission) int { return cmp.Compare(x.lo(), y.lo()) })
	var ends []admission // those from i on, sorted by at
	for i := len(adm) - 1; i >= 0; i-- {
		k, _ := slices.BinarySearchFunc(ends, adm[i].at, func(e admission, at int64) int { return cmp.Compare(e.at, at) })
		ends = slices.Insert(ends, k, adm[i])
		if i > 0 && adm[i-1].lo() == adm[i].lo() {
			continue // the interval from this lo is checked with all of them
		}
		sum := int64(0)
		for j, e := range ends {
			sum += e.n
			if j+1 < len(ends) && ends[j+1].at == e.at {
				continue
			}
			if span := max(e.at-adm[i].lo(), 0); over(sum, span) {
				return fmt.Sprintf("%d units admitted within [%d, %d], span %v: over the bound", sum, adm[i].lo(), e.at, time.Duration(span))
			}
		}
	}
	return ""
}

// TestCheckBound: the check fails a schedule over the bound, and passes
// one whose first time is known only within the call that made it when
// it may have been early enough.
func TestCheckBound(t *testing.T) {
	burst2 := func(sum, span int64) bool { return sum > 2+span/10 } // 2, then a unit per 10ns
	cases := []struct {
		adm  []admission
		over bool
	}{
		{[]admission{{at: 100, n: 1}, {at: 100, n: 1}, {at: 110, n: 1}}, false},
		{[]admission{{at: 100, n: 1}, {at: 100, n: 1}, {at: 109, n: 1}}, true},
		{[]admission{{at: 110, n: 1}, {at: 105, n: 2}, {at: 114, n: 1}}, true},
		{[]admission{{from: 100, at: 105, n: 1}, {at: 105, n: 1}, {at: 110, n: 1}}, false},
		{[]admission{{from: 101, at: 105, n: 1}, {at: 105, n: 1}, {at: 110, n: 1}}, true},
	}
	for _, c := range cases {
		if got := boundExcess(slices.Clone(c.adm), burst2) != ""; got != c.over {
			t.Errorf("%+v: over %t, want %t", c.adm, got, c.over)
		}
	}
}

// TestStaleTimesNeverOverAdmit drives both limiters with a clock that,
// like a replica promoted by a failover, is behind the one before it by up
// to a few bursts, many times over, with many requests at each time, and
// checks the exact bounds over the times the decisions were made at: GCRA
// burst + events*T/period, window limit*(ceil(T/W)+1).
func TestStaleTimesNeverOverAdmit(t *testing.T) {
	t.Parallel() // waits on round trips; keys in a database of its own
	_, c := server(t)
	rng := rand.New(rand.NewPCG(7, 8))
	const events, burst = 3, 4
	period := time.Second
	g, _ := NewGCRA(c, "sg", events, period, burst, WithGrace(time.Hour))
	const wl = 5
	ww := 700 * time.Millisecond
	w, _ := NewWindow(c, "sw", wl, ww, WithGrace(time.Hour))
	var ga, wa []admission
	now := time.Now().UnixNano()
	for range 1500 {
		switch k := rng.IntN(40); {
		case k < 36:
			now += rng.Int64N(int64(200 * time.Millisecond))
		case k < 37:
			now -= rng.Int64N(int64(2 * time.Second)) // a failover to a clock behind
		}
		n := 1 + rng.Int64N(2)
		if r, err := g.allowNAt(bg, "k", now, n); err != nil {
			t.Fatal(err)
		} else if r.OK {
			ga = append(ga, admission{at: now, n: n})
		}
		if r, err := w.allowNAt(bg, "k", now, n); err != nil {
			t.Fatal(err)
		} else if r.OK {
			wa = append(wa, admission{at: now, n: n})
		}
	}
	checkBound(t, ga, func(sum, span int64) bool {
		// sum > burst + events*span/period  <=>  sum*period > burst*period + events*span
		l := new(big.Int).Mul(big.NewInt(sum), big.NewInt(int64(period)))
		r := new(big.Int).Mul(big.NewInt(burst), big.NewInt(int64(period)))
		r.Add(r, new(big.Int).Mul(big.NewInt(events), big.NewInt(span)))
		return l.Cmp(r) > 0
	})
	checkBound(t, wa, func(sum, span int64) bool {
		windows := (span + int64(ww) - 1) / int64(ww)
		return sum > wl*(windows+1)
	})
	t.Logf("gcra admitted %d times, window %d", len(ga), len(wa))
}
