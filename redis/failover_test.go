package redis

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/cellrate/cellrate/redis/internal/redistest"
)

// TestFaultFailoverBound kills, under load, the master holding a
// Limiter's key and a TwoTier's key in a cluster of three masters with a
// replica each, without waiting for the replica to have the last writes:
// two processes (clients) each ask both limiters many times their rate
// until the replica has taken over and both decide again. Decisions fail
// closed while no master serves the keys; the admissions stay within the
// bound plus what the documentation allows a failover to lose, once: the
// Limiter's burst, two of the TwoTier's Redis bursts. The Limiter's rate is one a
// minute, so its bucket does not refill during the failover: what it
// admits after the kill is what the failover lost.
func TestFaultFailoverBound(t *testing.T) {
	if testing.Short() {
		t.Skip("a failover takes seconds")
	}
	cl := redistest.StartCluster(t, 3, 1)
	const gburst, events, tburst = 20, 2, 50 // the Limiter: 1/min; the TwoTier: 2/s
	type proc struct {
		l  *Limiter
		tt *TwoTier
	}
	var ps []proc
	for range 2 {
		c := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: cl.Addrs(), ContextTimeoutEnabled: true,
			DialTimeout: faultTimeout, MaxRedirects: 3})
		t.Cleanup(func() { c.Close() })
		l, err := NewGCRA(c, "fb:", 1, time.Minute, gburst, WithTimeout(faultTimeout))
		if err != nil {
			t.Fatal(err)
		}
		tt, err := NewTwoTier(c, "fbt:", events, time.Second, tburst, WithTimeout(faultTimeout))
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, proc{l, tt})
	}
	c := ps[0].tt.r.c.(*goredis.ClusterClient)
	masterOf := func(key string) string {
		m, err := c.MasterForKey(bg, key)
		if err != nil {
			t.Fatal(err)
		}
		return m.Options().Addr
	}
	addr := masterOf(ps[0].l.keyOf("k"))
	tkey := "k"
	for i := 0; masterOf(ps[0].tt.r.keyOf(tkey)) != addr; i++ {
		tkey = "k" + strconv.Itoa(i)
	}
	var master *redistest.Server
	for _, n := range cl.Nodes {
		if n.Addr == addr {
			master = n
		}
	}

	// The replica is linked (else the failover loses every write, as the
	// first run of this test found: the bound below still held).
	deadline := time.Now().Add(15 * time.Second)
	for {
		info, _ := master.Do("INFO", "replication")
		if strings.Contains(info, "state=online") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the replica of %s is not online: %s", addr, info)
		}
		time.Sleep(20 * time.Millisecond)
	}

	var line atomic.Int64 // the wait the first borrow after the failover got
	var gcraOK, gcraErr, ttErr, gcraAfter, gcraBack, ttBack atomic.Int64
	var killed atomic.Bool
	var mu sync.Mutex
	var adm []admission
	var first, last atomic.Int64 // wall ns: before the first request, after the last reply
	first.Store(time.Now().UnixNano())
	stop := make(chan struct{})
	var wg sync.WaitGroup
	loop := func(f func()) {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			f()
			time.Sleep(time.Millisecond) // about ten times the rate per goroutine
		}
	}
	for _, p := range ps {
		wg.Add(2)
		go loop(func() {
			ok, err := p.l.Allow(bg, "k")
			switch {
			case err != nil:
				gcraErr.Add(1)
			case killed.Load() && gcraErr.Load() > 0:
				gcraBack.Add(1) // decided by the promoted replica
			}
			if ok {
				gcraOK.Add(1)
				if killed.Load() {
					gcraAfter.Add(1)
				}
			}
			last.Store(time.Now().UnixNano())
		})
		go loop(func() {
			before := p.tt.Stats()
			r, at, err := p.tt.allow(bg, tkey, 1)
			after := p.tt.Stats()
			switch {
			case err != nil:
				ttErr.Add(1)
			case killed.Load() && ttErr.Load() > 0 && after.RoundTrips > before.RoundTrips && after.Errors == before.Errors:
				if ttBack.Add(1) == 1 { // a borrow from the promoted replica
					line.Store(int64(r.RetryAfter))
				}
			}
			if r.OK {
				mu.Lock()
				adm = append(adm, admission{at: at, n: 1})
				mu.Unlock()
			}
		})
	}
	time.Sleep(300 * time.Millisecond)
	master.Kill()
	killed.Store(true)
	start := time.Now()
	deadline = start.Add(25 * time.Second)
	for gcraBack.Load() < 5 || ttBack.Load() < 1 {
		if time.Now().After(deadline) {
			close(stop)
			wg.Wait()
			t.Fatalf("no recovery in 25s: %d and %d decided after the kill", gcraBack.Load(), ttBack.Load())
		}
		time.Sleep(20 * time.Millisecond)
	}
	recovered := time.Since(start)
	time.Sleep(300 * time.Millisecond)
	close(stop)
	wg.Wait()

	span := float64(last.Load()-first.Load()) / 1e9
	gbound := gburst + int64(span/60)
	t.Logf("failover in %v; Limiter: %d admitted, %d of them after the kill (bound %d over the run, %d with the burst a failover may lose), %d errors; TwoTier: %d admitted in %.1fs (bound %.0f), %d errors, its first borrow after waits %v",
		recovered.Round(time.Millisecond), gcraOK.Load(), gcraAfter.Load(), gbound, gbound+gburst, gcraErr.Load(),
		len(adm), span, tburst+events*span, ttErr.Load(), time.Duration(line.Load()))
	if gcraErr.Load() == 0 || ttErr.Load() == 0 {
		t.Errorf("no decision failed while the master was down: %d, %d", gcraErr.Load(), ttErr.Load())
	}
	if gcraOK.Load() > gbound+gburst {
		t.Errorf("the Limiter admitted %d, over its bound %d and a burst", gcraOK.Load(), gbound)
	}
	rb := ps[0].tt.redisBurst()
	checkBound(t, adm, func(sum, span int64) bool { return sum*1e9 > (tburst+2*rb)*1e9+events*span })
}
