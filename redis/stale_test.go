package redis

import (
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

type admission struct{ at, n int64 }

// checkBound fails t if the units admitted at times in some closed
// interval [a, b] exceed bound(b-a), exactly (bound compares in big ints).
func checkBound(t *testing.T, adm []admission, over func(sum, span int64) bool) {
	t.Helper()
	slices.SortStableFunc(adm, func(x, y admission) int {
		switch {
		case x.at < y.at:
			return -1
		case x.at > y.at:
			return 1
		}
		return 0
	})
	for i := range adm {
		sum := int64(0)
		for j := i; j < len(adm); j++ {
			sum += adm[j].n
			if j+1 < len(adm) && adm[j+1].at == adm[j].at {
				continue
			}
			if over(sum, adm[j].at-adm[i].at) {
				t.Fatalf("%d units admitted at times in [%d, %d], span %v: over the bound", sum, adm[i].at, adm[j].at, time.Duration(adm[j].at-adm[i].at))
			}
		}
	}
}

// TestStaleTimesNeverOverAdmit drives both limiters with a clock that,
// like a replica promoted by a failover, is behind the one before it by up
// to a few bursts, many times over, with many requests at each time, and
// checks the exact bounds over the times the decisions were made at: GCRA
// burst + events*T/period, window limit*(ceil(T/W)+1).
func TestStaleTimesNeverOverAdmit(t *testing.T) {
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
			ga = append(ga, admission{now, n})
		}
		if r, err := w.allowNAt(bg, "k", now, n); err != nil {
			t.Fatal(err)
		} else if r.OK {
			wa = append(wa, admission{now, n})
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
