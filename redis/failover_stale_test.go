package redis

import (
	"cmp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/cellrate/cellrate/redis/internal/redistest"
)

// TestFaultFailoverStaleReplica promotes a replica that holds an older
// state of a TwoTier's key: two processes saturate the key; its master's
// replica is paused, and more replication is queued for it than the
// kernel's socket buffers hold (so the borrows after it never arrive); the
// processes go on borrowing for half a second; the master is killed, the
// replica resumed and promoted (CLUSTER FAILOVER TAKEOVER). The replica
// has forgotten those borrows, whose units are spent all the same: the
// admissions must stay within the bound plus the two Redis bursts the
// documentation allows a failover to lose, and the test reports by how
// much they passed the bound.
func TestFaultFailoverStaleReplica(t *testing.T) {
	if testing.Short() {
		t.Skip("a failover takes seconds")
	}
	cl := redistest.StartCluster(t, 3, 1)
	const events, burst = 100, 100 // lease 250ms, Redis burst 75
	var tts []*TwoTier
	for range 2 {
		c := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: cl.Addrs(), ContextTimeoutEnabled: true,
			DialTimeout: faultTimeout, MaxRedirects: 3})
		t.Cleanup(func() { c.Close() })
		tt, err := NewTwoTier(c, "fst:", events, time.Second, burst, WithTimeout(faultTimeout))
		if err != nil {
			t.Fatal(err)
		}
		tts = append(tts, tt)
	}
	master, replica := masterAndReplica(t, cl, tts[0], "k")

	var adm []admission
	var mu sync.Mutex
	var errs, back atomic.Int64
	var killed atomic.Bool
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, tt := range tts {
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					before := tt.Stats()
					r, at, err := tt.allow(bg, "k", 1)
					after := tt.Stats()
					switch {
					case err != nil:
						errs.Add(1)
					case killed.Load() && after.RoundTrips > before.RoundTrips && after.Errors == before.Errors:
						back.Add(1) // a borrow from the promoted replica
					}
					if r.OK {
						mu.Lock()
						adm = append(adm, admission{at: at, n: 1})
						mu.Unlock()
					}
					time.Sleep(time.Millisecond)
				}
			}()
		}
	}
	halt := func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		wg.Wait()
	}
	defer halt()

	time.Sleep(300 * time.Millisecond)
	replica.Stop()
	// 32 MB in the replication stream, more than loopback's socket buffers
	// (a few MB): what follows stays in the master's memory, lost with it.
	if _, err := master.Do("SET", "fill{k}", strings.Repeat("x", 32<<20)); err != nil {
		t.Fatal(err)
	}
	if _, err := master.Do("SET", "mark{k}", "1"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	master.Kill()
	killed.Store(true)
	replica.Continue()
	start := time.Now()
	deadline := start.Add(20 * time.Second)
	for {
		if _, err := replica.Do("CLUSTER", "FAILOVER", "TAKEOVER"); err == nil || strings.Contains(err.Error(), "replica") {
			break // asked, or already a master
		} else if time.Now().After(deadline) {
			t.Fatalf("CLUSTER FAILOVER TAKEOVER: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for back.Load() < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("no borrow from the promoted replica in 20s (%d errors)", errs.Load())
		}
		time.Sleep(20 * time.Millisecond)
	}
	recovered := time.Since(start)
	time.Sleep(500 * time.Millisecond)
	halt()

	if v, err := replica.Do("GET", "mark{k}"); err != nil || v != "" {
		t.Fatalf("the promoted replica has the write made after it was paused (%q, %v): it was not behind", v, err)
	}
	rb := tts[0].redisBurst()
	over := overBound(adm, burst, events)
	t.Logf("failover in %v; %d admitted, %d errors; at most %d over burst + rate*t in an interval (allowed: two Redis bursts, %d)",
		recovered.Round(time.Millisecond), len(adm), errs.Load(), over, 2*rb)
	if errs.Load() == 0 {
		t.Error("no decision failed while the master was down")
	}
	if over > 2*rb {
		t.Fatalf("%d admitted over the bound, more than two Redis bursts (%d)", over, 2*rb)
	}
}

// masterAndReplica returns the master serving key of tt and its replica.
func masterAndReplica(t *testing.T, cl *redistest.Cluster, tt *TwoTier, key string) (master, replica *redistest.Server) {
	t.Helper()
	m, err := tt.r.c.(*goredis.ClusterClient).MasterForKey(bg, tt.r.keyOf(key))
	if err != nil {
		t.Fatal(err)
	}
	addr := m.Options().Addr
	port := addr[strings.LastIndex(addr, ":")+1:]
	deadline := time.Now().Add(15 * time.Second)
	for master == nil || replica == nil {
		for _, n := range cl.Nodes {
			info, _ := n.Do("INFO", "replication")
			switch {
			case n.Addr == addr && strings.Contains(info, "state=online"):
				master = n
			case strings.Contains(info, "role:slave") && strings.Contains(info, "master_port:"+port+"\r\n"):
				replica = n
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no master with a replica online for %s", addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return master, replica
}

// overBound returns the most by which the units admitted at times in some
// closed interval pass burst + events*span/1s (0 if none does).
func overBound(adm []admission, burst, events int64) int64 {
	slices.SortFunc(adm, func(x, y admission) int { return cmp.Compare(x.at, y.at) })
	var over int64
	for i := range adm {
		sum := int64(0)
		for j := i; j < len(adm); j++ {
			sum += adm[j].n
			// sum*1e9 > burst*1e9 + events*span exactly when sum - burst
			// passes the floor of events*span/1e9: by that many units.
			over = max(over, sum-burst-events*(adm[j].at-adm[i].at)/1e9)
		}
	}
	return over
}
