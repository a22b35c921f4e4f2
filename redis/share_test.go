package redis

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/cellrate/cellrate/redis/internal/redistest"
)

// process is one of several limiters, each on its own client (its own
// connections), standing for a process.
type process struct {
	tt              *TwoTier
	asked, admitted atomic.Int64
}

// share runs each process at its rate (requests per second; 0: as fast as
// it can) on one key for d, and returns the admissions of all at the times
// they count at.
func share(t *testing.T, s *redistest.Server, rates []int, d time.Duration, mk func(c Client) (*TwoTier, error)) ([]*process, []admission) {
	var ps []*process
	var mu sync.Mutex
	var adm []admission
	var wg sync.WaitGroup
	stop := time.Now().Add(d)
	for _, rate := range rates {
		c := goredis.NewClient(s.Options())
		t.Cleanup(func() { c.Close() })
		tt, err := mk(c)
		if err != nil {
			t.Fatal(err)
		}
		p := &process{tt: tt}
		ps = append(ps, p)
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []admission
			next := time.Now()
			for time.Now().Before(stop) {
				if rate > 0 {
					next = next.Add(time.Second / time.Duration(rate))
					time.Sleep(time.Until(next))
				}
				p.asked.Add(1)
				r, at, err := tt.allow(bg, "k", 1)
				if err != nil {
					t.Error(err)
					return
				}
				if r.OK {
					p.admitted.Add(1)
					mine = append(mine, admission{at, 1})
				}
			}
			mu.Lock()
			adm = append(adm, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return ps, adm
}

func totals(ps []*process) (asked, admitted, trips int64) {
	for _, p := range ps {
		asked += p.asked.Load()
		admitted += p.admitted.Load()
		trips += p.tt.Stats().RoundTrips
	}
	return
}

// TestTwoTierLightProcesses: eight processes asking 100/s each of a key
// limited to 1000/s, burst 1000 (total demand within the limit) are
// admitted at least 95% of what they ask, with at most one round trip per
// admission.
func TestTwoTierLightProcesses(t *testing.T) {
	s := redistest.Shared(t)
	d := 2 * time.Second
	if testing.Short() {
		d = 400 * time.Millisecond // the bound only
	}
	rates := []int{100, 100, 100, 100, 100, 100, 100, 100}
	ps, adm := share(t, s, rates, d, func(c Client) (*TwoTier, error) {
		return NewTwoTier(c, "light", 1000, time.Second, 1000, WithTimeout(5*time.Second))
	})
	checkBound(t, adm, func(sum, span int64) bool { return sum*1e9 > 1000*1e9+1000*span })
	asked, admitted, trips := totals(ps)
	t.Logf("8 processes at 100/s: %d of %d asked admitted (%.1f%%), %d round trips (%.3f per admission)",
		admitted, asked, 100*float64(admitted)/float64(asked), trips, float64(trips)/float64(admitted))
	if testing.Short() {
		return // the figures below need a machine that is not also running -race
	}
	if admitted*100 < asked*95 {
		t.Errorf("admitted %d of %d asked, under 95%%", admitted, asked)
	}
	if trips > admitted {
		t.Errorf("%d round trips for %d admissions", trips, admitted)
	}
}

// TestTwoTierSaturated: three processes asking as fast as they can of a
// key limited to 50/s, burst 10: the bound holds exactly, they are
// admitted about it, and round trips stay under one per admission (a
// borrow of the empty key reserves the units to come: none comes back
// empty).
func TestTwoTierSaturated(t *testing.T) {
	s := redistest.Shared(t)
	d := 2 * time.Second
	if testing.Short() {
		d = 400 * time.Millisecond // the bound only
	}
	ps, adm := share(t, s, []int{0, 0, 0}, d, func(c Client) (*TwoTier, error) {
		return NewTwoTier(c, "sat", 50, time.Second, 10, WithTimeout(5*time.Second))
	})
	checkBound(t, adm, func(sum, span int64) bool { return sum*1e9 > 10*1e9+50*span })
	_, admitted, trips := totals(ps)
	bound := 10 + 50*d.Seconds()
	t.Logf("3 saturating processes at 50/s burst 10: %d admitted (bound %.0f over the run), %d round trips (%.2f per admission)",
		admitted, bound, trips, float64(trips)/float64(admitted))
	if testing.Short() {
		return
	}
	if float64(admitted) < 0.8*bound {
		t.Errorf("admitted %d, under 80%% of the bound %.0f", admitted, bound)
	}
	if trips > admitted {
		t.Errorf("%d round trips for %d admissions", trips, admitted)
	}
}

// TestTwoTierNoSpikes: a saturating process on a key at 100/s, burst 1000,
// once the burst is spent, is admitted steadily at the rate: a denial is
// kept until the next unit could be there, not until a batch refilled.
func TestTwoTierNoSpikes(t *testing.T) {
	s := redistest.Shared(t)
	d := 1500 * time.Millisecond
	if testing.Short() {
		d = 500 * time.Millisecond // the bound only
	}
	ps, adm := share(t, s, []int{0}, d, func(c Client) (*TwoTier, error) {
		return NewTwoTier(c, "spike", 100, time.Second, 1000, WithTimeout(5*time.Second))
	})
	checkBound(t, adm, func(sum, span int64) bool { return sum*1e9 > 1000*1e9+100*span })
	first := adm[0].at
	var gap, after int64
	for i := 1; i < len(adm); i++ {
		if adm[i].at-first > int64(500*time.Millisecond) {
			gap = max(gap, adm[i].at-adm[i-1].at)
			after++
		}
	}
	_, admitted, trips := totals(ps)
	t.Logf("after the burst: %d admitted in 1s, longest gap %v; %d admitted in all, %d round trips",
		after, time.Duration(gap), admitted, trips)
	// Waiting for a batch (187 units at 100/s) would leave gaps of 1.9s.
	if !testing.Short() && (gap > int64(time.Second) || after < 70) {
		t.Errorf("after the burst: %d admitted in 1s, longest gap %v", after, time.Duration(gap))
	}
}
