package gcra

import (
	"cmp"
	"math"
	"math/big"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestSetRateConcurrentMixed: two goroutines' SetRate racing each other
// and every kind of decision (AllowN, TakeAt with Refund, ReserveN with
// CancelAt, Allow) on a clock that only moves forward; under -race, no
// data race, every change makes one generation, and the events kept
// (taken less given back) stay within the fastest rate's bound.
func TestSetRateConcurrentMixed(t *testing.T) {
	const fast, slow, b = 1e6, 1e4, 4 // per second
	var clock atomic.Int64
	l, _ := NewRate(fast, b, WithClock(func() int64 { return clock.Add(7) }))
	var kept atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				now := clock.Add(7)
				switch (i + w) % 4 {
				case 0:
					if r, _ := l.AllowNAt(now, 2); r.OK {
						kept.Add(2)
					}
				case 1:
					if r, rc, _ := l.TakeAt(now, 1); r.OK {
						kept.Add(1)
						if i%3 == 0 {
							before := l.state()
							l.Refund(rc)
							if l.state() != before {
								kept.Add(-1)
							}
						}
					}
				case 2:
					// A reservation that needs no wait is kept; one
					// that must wait is cancelled (or, if that fails,
					// left uncounted, which only weakens the check).
					if r, _ := l.ReserveNAt(now, 1); r.OK && r.Wait == 0 {
						kept.Add(1)
					} else if r.OK {
						r.CancelAt(now)
					}
				default:
					if l.Allow() {
						kept.Add(1)
					}
				}
			}
		}()
	}
	changes := 40
	if testing.Short() {
		changes = 20
	}
	// Two setters race each other too: a SetRate waits for one in
	// progress, and each generation is retired once.
	var setters sync.WaitGroup
	for s := range 2 {
		setters.Add(1)
		go func() {
			defer setters.Done()
			for i := range changes {
				rate := fast
				if (i+s)%2 == 1 {
					rate = slow
				}
				if err := l.SetRate(rate); err != nil {
					t.Error(err)
					return
				}
				for c := clock.Load(); clock.Load() < c+7*100; {
					runtime.Gosched() // let the deciders run 100 decisions
				}
			}
		}()
	}
	setters.Wait()
	stop.Store(true)
	wg.Wait()
	if g := l.load(); g.id != uint64(2*changes) {
		t.Fatalf("generation %d after %d changes", g.id, 2*changes)
	}
	if n, c := kept.Load(), clock.Load(); n > b+c/1000+1 {
		t.Fatalf("%d kept over %d ns, bound %d", n, c, b+c/1000)
	}
}

// TestEndOfTimeMarkers: random decisions of every kind and changes of rate
// with now in the last microseconds of int64 time, where admissions run
// into the TAT values kept for retired and pending generations: no state
// ever holds one of them (a live TAT there would be taken for a retired
// one, whose successor is nil), and nothing is admitted past the end.
func TestEndOfTimeMarkers(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	runs := 400
	if testing.Short() {
		runs = 100
	}
	admitted := 0
	for range runs {
		b := 1 + rng.Int64N(5)
		l, err := NewRate(1e9/float64(1+rng.IntN(3)), b)
		if err != nil {
			t.Fatal(err)
		}
		for range 60 {
			now := int64(math.MaxInt64) - rng.Int64N(40)
			switch rng.IntN(6) {
			case 0:
				if err := l.SetRateAt(now, float64(1+rng.IntN(4))*1e8); err != nil {
					t.Fatal(err)
				}
			case 1:
				if l.AllowAt(now) {
					admitted++
				}
			case 2:
				l.AllowNAt(now, 1+rng.Int64N(b))
			case 3:
				if r, _ := l.ReserveNAt(now, 1+rng.Int64N(b)); r.OK && rng.IntN(2) == 0 {
					r.CancelAt(now)
				}
			case 4:
				if r, rc, _ := l.TakeAt(now, 1+rng.Int64N(b)); r.OK && rng.IntN(2) == 0 {
					l.Refund(rc)
				}
			default:
				l.RemainingAt(now)
				l.TokensAt(now)
			}
			if g := l.load(); g.tat.Load() > math.MaxUint64-2 {
				t.Fatalf("live TAT %#x, above the largest a live one may hold", g.tat.Load())
			}
		}
	}
	if admitted == 0 {
		t.Fatal("nothing admitted near the end of time: the test reaches no marker")
	}
}

// TestSetRateBoundStaleDecisions: random single-goroutine schedules of
// admissions and changes of rate, the bound of the rates in force checked
// exactly on every interval; a third of the decisions made at a stale now
// (up to 2µs back, never before the last change, as SetRateAt's bound
// requires), in half the runs reservations (counted at their time to act
// unless a change follows, which the bound then leaves out), and in half
// the runs changes at a stale now (each allowed its lag behind the latest
// decision times its new rate): the bound holds on every interval between
// two admissions, sorted by their now. Counting the reservations across a
// change, or no allowance for a stale change, fails it.
func TestSetRateBoundStaleDecisions(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	runs := 200
	if testing.Short() {
		runs = 40
	}
	for run := range runs {
		type change struct {
			at   int64
			rate *big.Rat // events per ns
		}
		b := 1 + rng.Int64N(4)
		// A rate of ev events per per ns, and the same as a float per
		// second (read back exactly: its denominator is small).
		mk := func() (float64, *big.Rat) {
			ev := 1 + rng.Int64N(5)
			per := time.Duration(ev + rng.Int64N(3000))
			ps, err := NewParams(ev, per, b)
			f := float64(ev) * 1e9 / float64(per)
			if rp, _ := RateParams(f, b); err != nil || rp != ps {
				t.Fatalf("%d per %v: %v, or %v/s read back as other Params", ev, per, err, f)
			}
			return f, big.NewRat(ev, int64(per))
		}
		f, r := mk()
		ps, _ := RateParams(f, b)
		l, _ := NewFromParams(ps)
		now := rng.Int64() >> 1 // far from the ends: the schedule only moves forward
		if run%4 == 0 {
			now = -1 << 62 // near no end
		}
		changes := []change{{now, r}}
		type use struct{ at, n int64 }
		var uses []use
		last := now // the last change's now
		reserve := run%2 == 1
		var held []use // reservations since the last change
		staleChanges := run%4 >= 2
		latest := now         // the latest now of a decision
		slack := new(big.Rat) // the allowance for stale changes
		for range 300 {
			now += rng.Int64N(800)
			at := now // a decision's now: up to 2000 ns stale, not before last
			if rng.IntN(3) == 0 {
				at = max(last, now-rng.Int64N(2000))
			}
			latest = max(latest, at)
			switch k := rng.IntN(20); {
			case k == 0:
				f, r = mk()
				cnow := now // a change's now: in half the runs, stale too
				if staleChanges && rng.IntN(2) == 0 {
					cnow = max(last, now-rng.Int64N(2000))
				}
				// Up to lag times the new rate more, for a change
				// whose now is lag before a decision already made.
				slack.Add(slack, new(big.Rat).Mul(r, new(big.Rat).SetInt64(max(0, latest-cnow))))
				last = cnow
				held = held[:0] // outside the bound from now on
				if err := l.SetRateAt(cnow, f); err != nil {
					t.Fatal(err)
				}
				changes = append(changes, change{cnow, r})
			case k == 1 && reserve:
				// Counted at their time to act, unless a change
				// follows: the bound across a change leaves out the
				// reservations made before it.
				n := 1 + rng.Int64N(b)
				if r, _ := l.ReserveNAt(at, n); r.OK && !(rng.IntN(2) == 0 && r.CancelAt(at)) {
					held = append(held, use{at + int64(r.Wait), n})
				}
			case k < 5:
				n := 1 + rng.Int64N(b)
				if res, err := l.AllowNAt(at, n); err != nil {
					t.Fatal(err)
				} else if res.OK {
					uses = append(uses, use{at, n})
				}
			default:
				if l.AllowAt(at) {
					uses = append(uses, use{at, 1})
				}
			}
		}
		uses = append(uses, held...)
		slices.SortStableFunc(uses, func(a, b use) int { return cmp.Compare(a.at, b.at) })
		// F[i] is the integral of the rate in force up to uses[i].at (each
		// rate from its change's now on): the bound between uses i and j is
		// the burst plus F[j] - F[i].
		F := make([]*big.Rat, len(uses))
		fl := make([]float64, len(uses))
		for i, u := range uses {
			F[i] = new(big.Rat)
			for k, c := range changes {
				end := u.at
				if k+1 < len(changes) {
					end = min(end, changes[k+1].at)
				}
				if end > c.at {
					F[i].Add(F[i], new(big.Rat).Mul(c.rate, new(big.Rat).SetInt64(end-c.at)))
				}
			}
			fl[i], _ = F[i].Float64()
		}
		for i := range uses {
			var sum int64
			for j := i; j < len(uses); j++ {
				sum += uses[j].n
				most := b
				sl, _ := slack.Float64()
				if float64(sum) < float64(most)+fl[j]-fl[i]+sl-1e-3 {
					continue // clear of the bound; check the close ones exactly
				}
				allow := new(big.Rat).Sub(F[j], F[i])
				allow.Add(allow, new(big.Rat).SetInt64(most))
				allow.Add(allow, slack)
				if new(big.Rat).SetInt64(sum).Cmp(allow) > 0 {
					t.Fatalf("run %d: %d events in [%d, %d], bound %s; changes %+v", run, sum, uses[i].at, uses[j].at, allow.FloatString(3), changes)
				}
			}
		}
	}
}
