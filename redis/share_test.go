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
				from := monotonic()
				r, at, err := tt.allow(bg, "k", 1)
				if err != nil {
					t.Error(err)
					return
				}
				if r.OK {
					p.admitted.Add(1)
					mine = append(mine, admission{at: at, n: 1, from: from})
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
	parallelIfShort(t)
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
	parallelIfShort(t)
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
// once the burst is spent, is denied only until the next unit could be
// there (10ms), not until a batch refilled (1.9s for the 187 units it
// would borrow). What it measures is each run of denials with no
// admission between, from the end of its first call to the start of its
// last (the limiter denied over at least that span): a pause of the
// process or of Redis on a loaded machine adds nothing to it, since a
// denial kept until a time does not outlast that time.
func TestTwoTierNoSpikes(t *testing.T) {
	t.Parallel() // sleeps; keys in a database of its own
	s := redistest.Shared(t)
	c := goredis.NewClient(s.Options())
	t.Cleanup(func() { c.Close() })
	tt, err := NewTwoTier(c, "spike", 100, time.Second, 1000, WithTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var adm []admission
	var runs, denials int
	var longest, firstEnd, denied int64 // firstEnd: the end of the run's first denial, 0 out of one
	d := int64(time.Second)             // of saturation after the first denial
	if testing.Short() {
		d /= 2
	}
	start := monotonic()
	for now := start; now-start < int64(10*time.Second) && (denied == 0 || now-denied < d); {
		r, at, err := tt.allow(bg, "k", 1)
		end := monotonic()
		switch {
		case err != nil:
			t.Fatal(err)
		case r.OK:
			adm = append(adm, admission{at: at, n: 1})
			firstEnd = 0
		case firstEnd == 0:
			firstEnd, runs, denials = end, runs+1, denials+1
			if denied == 0 {
				denied = now
			}
		default:
			longest, denials = max(longest, now-firstEnd), denials+1
		}
		now = end
	}
	checkBound(t, adm, func(sum, span int64) bool { return sum*1e9 > 1000*1e9+100*span })
	t.Logf("%d admitted, %d denials in %d runs over %v after the burst; longest run of denials at least %v; %d round trips",
		len(adm), denials, runs, time.Duration(monotonic()-denied), time.Duration(longest), tt.Stats().RoundTrips)
	if denied == 0 {
		t.Fatal("the burst was never spent")
	}
	if longest > int64(200*time.Millisecond) {
		t.Errorf("denied for %v in a row: a denial outlasted the next unit's time", time.Duration(longest))
	}
}
