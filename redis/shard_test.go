package redis

import (
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/cellrate/cellrate/redis/internal/redistest"
)

// TestFaultShardDown kills one master of a three-master cluster without
// replicas (serving the rest of the slots, as
// cluster-require-full-coverage no lets it) while one TwoTier decides on a
// key of the dead master and on a key of a healthy one: the healthy key
// must see no error and be admitted about its bound, burst + rate*T, and
// never more.
func TestFaultShardDown(t *testing.T) {
	longTest(t)
	cl := redistest.StartCluster(t, 3, 0, "--cluster-require-full-coverage", "no")
	c := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: cl.Addrs(), ContextTimeoutEnabled: true,
		DialTimeout: faultTimeout, MaxRedirects: 3})
	t.Cleanup(func() { c.Close() })
	const events, burst = 1000, 200
	tt, err := NewTwoTier(c, "sd:", events, time.Second, burst, WithBatch(10), WithLease(20*time.Millisecond),
		WithTimeout(faultTimeout))
	if err != nil {
		t.Fatal(err)
	}
	master := func(key string) *redistest.Server {
		m, err := c.MasterForKey(bg, tt.r.keyOf(key))
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range cl.Nodes {
			if n.Addr == m.Options().Addr {
				return n
			}
		}
		t.Fatalf("no node %s", m.Options().Addr)
		return nil
	}
	healthy, dead := "h", ""
	for i := 0; dead == ""; i++ {
		if k := "d" + strconv.Itoa(i); master(k) != master(healthy) {
			dead = k
		}
	}
	for _, k := range []string{healthy, dead} {
		// The first round trip dials: under -race it may outlast the lease.
		for i := 0; ; i++ {
			ok, err := tt.Allow(bg, k)
			if ok {
				break
			}
			if i == 20 {
				t.Fatal(k, ok, err)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	held := tt.pool(dead)
	master(dead).Kill()

	var mu sync.Mutex
	var adm []admission
	var healthyErrs, slowTrips, deadErrs, deadUnavailable, deadOK atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	stop := start.Add(time.Second)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := []string{healthy, dead}[g%2]
			var mine []admission
			for time.Now().Before(stop) {
				from := monotonic()
				r, at, err := tt.allow(bg, key, 1)
				switch {
				case key == dead && errors.Is(err, ErrUnavailable):
					deadUnavailable.Add(1)
				case key == dead && err != nil:
					deadErrs.Add(1)
				case key == dead && r.OK:
					deadOK.Add(1)
				case errors.Is(err, ErrUnavailable):
					healthyErrs.Add(1)
				case err != nil: // a round trip slower than its timeout, on a loaded machine
					if slowTrips.Add(1) == 1 {
						t.Log("the healthy key:", err)
					}
				case r.OK:
					mine = append(mine, admission{at: at, n: 1, from: from})
				}
			}
			mu.Lock()
			adm = append(adm, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	span := time.Since(start)
	if n, m := healthyErrs.Load(), slowTrips.Load(); n != 0 || m > 3 {
		t.Fatalf("the healthy key got %d ErrUnavailable and %d other errors while another master was down", n, m)
	}
	// The dead master's key: a few round trips fail, then it is not asked
	// for the retry span, again and again; it admits at most the units it
	// held.
	if d, u := deadErrs.Load(), deadUnavailable.Load(); d == 0 || u < 10*d || deadOK.Load() > held {
		t.Fatalf("the dead master's key: %d errors from round trips, %d ErrUnavailable, %d admitted, %d held", d, u, deadOK.Load(), held)
	}
	checkBound(t, adm, func(sum, span int64) bool { return sum*1e9 > burst*1e9+events*span })
	want := float64(burst) + float64(events)*span.Seconds()
	floor := 0.8 // of the bound; under -short (beside -race runs) a stalled goroutine may lose more
	if testing.Short() {
		floor = 0.5
	}
	if float64(len(adm)) < floor*want {
		t.Fatalf("the healthy key got %d admissions in %v, under %.0f%% of its bound %.0f", len(adm), span, 100*floor, want)
	}
	t.Logf("healthy key: %d admitted in %v (bound %.0f), %d round trips past their timeout; dead master's key: %d failed round trips, %d ErrUnavailable",
		len(adm), span, want, slowTrips.Load(), deadErrs.Load(), deadUnavailable.Load())
}
