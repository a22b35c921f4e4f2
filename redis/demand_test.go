package redis

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/cellrate/cellrate/redis/internal/redistest"
)

// procLimiter is one process's limiter: its decision and its round trips.
type procLimiter struct {
	allow func() (ok bool, at int64, err error)
	trips func() int64
}

// demandRun is what processes asking at a pace made of one key in a run.
type demandRun struct {
	asked, admitted, trips int64
	adm                    []admission
}

// demand runs procs processes, each on its own client (its own
// connections), each asking perProc requests a second on one key for d.
func demand(t *testing.T, s *redistest.Server, procs int, perProc float64, d time.Duration, mk func(c Client) procLimiter) demandRun {
	var run demandRun
	var mu sync.Mutex
	var wg sync.WaitGroup
	var asked, admitted atomic.Int64
	var ds []procLimiter
	every := time.Duration(float64(time.Second) / perProc)
	stop := time.Now().Add(d)
	for range procs {
		c := goredis.NewClient(s.Options())
		t.Cleanup(func() { c.Close() })
		if err := c.Ping(bg).Err(); err != nil {
			t.Fatal(err)
		}
		dc := mk(c)
		ds = append(ds, dc)
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []admission
			for next := time.Now(); next.Before(stop); next = next.Add(every) {
				time.Sleep(time.Until(next))
				asked.Add(1)
				from := monotonic()
				ok, at, err := dc.allow()
				if err != nil {
					t.Error(err)
					return
				}
				if ok {
					admitted.Add(1)
					mine = append(mine, admission{at: at, n: 1, from: from})
				}
			}
			mu.Lock()
			run.adm = append(run.adm, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	run.asked, run.admitted = asked.Load(), admitted.Load()
	for _, dc := range ds {
		run.trips += dc.trips()
	}
	return run
}

// TestTwoTierDemand: three processes share a key of 100/s, burst 100, asking
// together half, once, three and ten times its rate. At every demand
// TwoTier keeps the bound exactly and makes at most one round trip per
// admission (a borrow of an empty key reserves the units to come, so no
// round trip comes back empty), and admits about what NewGCRA admits
// (which makes one round trip per request).
func TestTwoTierDemand(t *testing.T) {
	parallelIfShort(t)
	s := redistest.Shared(t)
	const events, burst, procs = 100, 100, 3
	d := 2 * time.Second
	if testing.Short() {
		d = 200 * time.Millisecond
	}
	probe := s.Client(t)
	for i, x := range []float64{0.5, 1, 3, 10} {
		per := x * events / procs
		var one *TwoTier
		tr := demand(t, s, procs, per, d, func(c Client) procLimiter {
			tt, err := NewTwoTier(c, fmt.Sprintf("dt%d", i), events, time.Second, burst, WithTimeout(5*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			one = tt
			return procLimiter{func() (bool, int64, error) { r, at, err := tt.allow(bg, "k", 1); return r.OK, at, err },
				func() int64 { return tt.Stats().RoundTrips }}
		})
		checkBound(t, tr.adm, func(sum, span int64) bool { return sum*1e9 > burst*1e9+events*span })
		// The key is full again once its TAT is past: an empty bucket and
		// the line of reservations, each process's at most half a lease's
		// refill.
		line := probe.PTTL(bg, one.r.keyOf("k")).Val()
		if most := time.Duration(one.redisBurst()+procs*one.rate.Load().half+1) * time.Second / events; line > most {
			t.Errorf("demand %.1fx: the key is full again in %v, over an empty bucket and a line of %d reservations of %d (%v)",
				x, line, procs, one.rate.Load().half, most)
		}
		if testing.Short() {
			continue // the comparison with NewGCRA below needs a machine that is not also running -race
		}
		var trips atomic.Int64
		gr := demand(t, s, procs, per, d, func(c Client) procLimiter {
			l, err := NewGCRA(c, fmt.Sprintf("dg%d", i), events, time.Second, burst, WithTimeout(5*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			return procLimiter{func() (bool, int64, error) { trips.Add(1); ok, err := l.Allow(bg, "k"); return ok, 0, err },
				func() int64 { return 0 }}
		})
		gr.trips = trips.Load()
		capacity := float64(burst) + events*d.Seconds()
		share := func(r demandRun) float64 { return float64(r.admitted) / min(float64(r.asked), capacity) }
		perAdm := func(r demandRun) float64 { return float64(r.trips) / float64(max(1, r.admitted)) }
		t.Logf("demand %4.1fx: TwoTier %4d of %4d asked admitted (%5.1f%% of min(asked, %.0f)), %.3f round trips/admission; NewGCRA %4d (%5.1f%%), %.3f",
			x, tr.admitted, tr.asked, 100*share(tr), capacity, perAdm(tr), gr.admitted, 100*share(gr), perAdm(gr))
		if tr.trips > tr.admitted {
			t.Errorf("demand %.1fx: %d round trips for %d admissions", x, tr.trips, tr.admitted)
		}
		if share(tr) < 0.8 || (x < 1 && share(tr) < 0.95) {
			t.Errorf("demand %.1fx: TwoTier admitted %.1f%%", x, 100*share(tr))
		}
	}
}
