package redis

import (
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// TestTwoTierZeroCost: AllowN of no units admits without Redis, with the
// units the key's pool holds as Remaining.
func TestTwoTierZeroCost(t *testing.T) {
	tt, err := NewTwoTier(offline, "zc", 100, time.Second, 40)
	if err != nil {
		t.Fatal(err)
	}
	r, err := tt.AllowN(bg, "k", 0)
	if err != nil || !r.OK || r.Remaining != 0 || r.RetryAfter != 0 {
		t.Fatalf("AllowN(0) of a key with nothing borrowed: %+v, %v", r, err)
	}
	tt.entry("k").add(7, monotonic()+int64(time.Hour))
	if r, err := tt.AllowN(bg, "k", 0); err != nil || !r.OK || r.Remaining != 7 {
		t.Fatalf("AllowN(0) of a key holding 7 units: %+v, %v", r, err)
	}
}

// TestReceivedNone: a borrow that finds no units denies for Redis's wait
// plus the time the rate refills one unit per earlier borrow that found
// none (zeros - 1 of them), with the pool's units as Remaining; one that
// finds some halves that count.
func TestReceivedNone(t *testing.T) {
	tt, err := NewTwoTier(offline, "rn", 100, time.Second, 40)
	if err != nil {
		t.Fatal(err)
	}
	e, rt := tt.entry("k"), tt.rate.Load()
	const redisWait = 50 * time.Millisecond
	for i, want := range []time.Duration{redisWait, redisWait + 10*time.Millisecond, redisWait + 20*time.Millisecond} {
		r, _, err := tt.received(e, rt, result{RetryAfter: redisWait}, 0, 1, monotonic())
		if err != nil || r.OK || r.RetryAfter != want || r.Remaining != 0 {
			t.Fatalf("empty borrow %d: %+v, %v; want a denial for %v, Remaining 0", i+1, r, err, want)
		}
	}
	if e.zeros != 3 {
		t.Fatalf("zeros %d after three empty borrows", e.zeros)
	}
	if r, _, err := tt.received(e, rt, result{OK: true}, 4, 1, monotonic()); err != nil || !r.OK || r.Remaining != 3 {
		t.Fatalf("a borrow of 4: %+v, %v", r, err)
	}
	if e.zeros != 1 {
		t.Fatalf("zeros %d after a borrow that found units, want 3/2 = 1", e.zeros)
	}
}

// TestSlowDenialCachedWhileWaiting: a caller that waited for the entry's
// lock while another cached a denial returns that denial's remaining wait.
func TestSlowDenialCachedWhileWaiting(t *testing.T) {
	tt, err := NewTwoTier(offline, "sd", 100, time.Second, 40)
	if err != nil {
		t.Fatal(err)
	}
	e := tt.entry("k")
	e.mu.Lock()
	done := make(chan limitResult, 1)
	go func() {
		r, err := tt.AllowN(bg, "k", 1)
		done <- limitResult{r.OK, r.RetryAfter, err}
	}()
	time.Sleep(20 * time.Millisecond) // the caller passes the first check and waits for the lock
	e.denyUntil.Store(monotonic() + int64(time.Hour))
	e.mu.Unlock()
	r := <-done
	if r.err != nil || r.ok || r.wait <= 0 || r.wait > time.Hour {
		t.Fatalf("denial cached while waiting: %+v; want a wait in (0, 1h]", r)
	}
}

type limitResult struct {
	ok   bool
	wait time.Duration
	err  error
}

// TestRefillRoundsUp: the time to refill k units is rounded up to the ns.
func TestRefillRoundsUp(t *testing.T) {
	rt := &tierRate{events: 3, period: time.Second}
	for k, want := range map[int64]int64{0: 0, 1: 333_333_334, 2: 666_666_667, 3: 1e9} {
		if got := rt.refill(k); got != want {
			t.Errorf("refill(%d) at 3/s = %d, want %d", k, got, want)
		}
	}
}

// TestSweepNodes: a sweep drops the health of a node that is neither
// failing nor down at its time, and keeps any other's (a dropped one would
// forget the failure and send the next calls to a node still down).
func TestSweepNodes(t *testing.T) {
	tt, err := NewTwoTier(offline, "sn", 100, time.Second, 40)
	if err != nil {
		t.Fatal(err)
	}
	now := monotonic() + int64(time.Hour) // a second past the last sweep
	nodes := map[string]struct {
		failing, downUntil int64
		kept               bool
	}{
		"healthy":            {0, 0, false},
		"down until now":     {0, now, false},
		"down past now":      {0, now + 1, true},
		"failing":            {1, 0, true},
		"failing, down past": {2, now + 1, true},
	}
	clients := map[string]*goredis.Client{}
	for name, n := range nodes {
		c := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1"})
		t.Cleanup(func() { c.Close() })
		h := new(health)
		h.failing.Store(n.failing)
		h.downUntil.Store(n.downUntil)
		tt.nodes.all.Store(c, h)
		clients[name] = c
	}
	tt.sweep(now)
	for name, n := range nodes {
		if _, ok := tt.nodes.all.Load(clients[name]); ok != n.kept {
			t.Errorf("%s node: kept %v, want %v", name, ok, n.kept)
		}
	}
}
