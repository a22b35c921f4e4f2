package redis

import (
	"context"
	"errors"
	"net"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/cellrate/cellrate/redis/internal/redistest"
)

// faultTimeout bounds each call in the fault tests; slack is what a loaded
// machine may add to a call's time (far below go-redis's default 3s).
const faultTimeout, slack = 100 * time.Millisecond, time.Second

func faultClient(t *testing.T, addr string) *goredis.Client {
	return goredis.NewClient(&goredis.Options{Addr: addr, ContextTimeoutEnabled: true,
		DialTimeout: faultTimeout, MaxRetries: -1})
}

// within fails t if f takes longer than d.
func within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	start := time.Now()
	f()
	if el := time.Since(start); el > d {
		t.Fatalf("%s took %v, over %v", what, el, d)
	}
}

// recovers retries f, a call that should succeed (ok: it should also
// admit), until it does or 3s pass, and fails t with its last result. On a
// loaded machine (-race, other tests) a call can outlast its 100ms
// timeout, or a TwoTier's round trip its 50ms lease (the units come back
// void): what a fault test asks of such calls is that they succeed again,
// not how fast.
func recovers(t *testing.T, what string, admit bool, f func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		ok, err := f()
		if err == nil && (ok || !admit) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v %v", what, ok, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// checkGoroutines fails t if goroutines are left over base once clients
// are closed.
func checkGoroutines(t *testing.T, base int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for runtime.NumGoroutine() > base {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines left, %d before:\n%s", runtime.NumGoroutine(), base, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestFaultDownAndRestart kills the server under a Limiter, a TwoTier
// failing closed and one failing open, then starts it again, empty: each
// answers within its timeout while Redis is down (Limiter and closed
// TwoTier with an error, the open one on its local share), and all recover.
func TestFaultDownAndRestart(t *testing.T) {
	longTest(t)
	base := runtime.NumGoroutine()
	s := redistest.Start(t)
	c := faultClient(t, s.Addr)
	l, _ := NewGCRA(c, "f", 100, time.Second, 10, WithTimeout(faultTimeout))
	closed, _ := NewTwoTier(c, "fc", 100, time.Second, 40, WithTimeout(faultTimeout), WithBatch(5), WithLease(50*time.Millisecond))
	open, _ := NewTwoTier(c, "fo", 100, time.Second, 40, WithTimeout(faultTimeout), WithBatch(5),
		WithLease(50*time.Millisecond), WithFailOpen(0.25))
	for _, f := range []func() (bool, error){
		func() (bool, error) { return l.Allow(bg, "k") },
		func() (bool, error) { return closed.Allow(bg, "k") },
		func() (bool, error) { return open.Allow(bg, "k") },
	} {
		recovers(t, "before the fault", false, f)
	}
	time.Sleep(60 * time.Millisecond) // the borrowed units' leases end

	s.Kill()
	within(t, 2*faultTimeout+slack, "Limiter, Redis down", func() {
		if r, err := l.AllowN(bg, "k", 1); err == nil || r.OK {
			t.Fatalf("Redis down: %+v %v", r, err)
		}
	})
	within(t, tripAfter*faultTimeout+slack, "closed TwoTier, Redis down", func() {
		for range tripAfter {
			if ok, err := closed.Allow(bg, "k"); err == nil || ok || errors.Is(err, ErrUnavailable) {
				t.Fatalf("Redis down, closed: %v %v", ok, err)
			}
		}
		// Within the retry span: no round trip.
		if ok, err := closed.Allow(bg, "k"); !errors.Is(err, ErrUnavailable) || ok {
			t.Fatalf("Redis down, closed, retry span: %v %v", ok, err)
		}
	})
	// Open: on the local limit, a quarter of the rate and burst: 10 at once.
	admitted := 0
	start := time.Now()
	within(t, tripAfter*faultTimeout+slack, "open TwoTier, Redis down", func() {
		for range 50 {
			ok, err := open.Allow(bg, "k")
			if err != nil && !strings.Contains(err.Error(), "refused") {
				t.Fatalf("open: %v", err)
			}
			if ok {
				admitted++
			}
		}
	})
	// 25/s refills one unit per 40ms of the loop (slow on a loaded machine).
	if most := 10 + 1 + int(time.Since(start)/(40*time.Millisecond)); admitted < 10 || admitted > most {
		t.Fatalf("open TwoTier admitted %d with Redis down, want the local burst 10 (+ the rate's refill: at most %d)", admitted, most)
	}
	if st := open.Stats(); st.Fallbacks == 0 || st.Errors == 0 {
		t.Fatalf("open stats %+v", st)
	}

	s.Restart() // empty, without the scripts: EVALSHA finds NOSCRIPT
	time.Sleep(110 * time.Millisecond)
	recovers(t, "Limiter after restart", true, func() (bool, error) {
		r, err := l.AllowN(bg, "k", 10) // a full key
		return r.OK, err
	})
	for _, tt := range []*TwoTier{closed, open} {
		recovers(t, "TwoTier after restart", true, func() (bool, error) { return tt.Allow(bg, "k") })
	}
	c.Close()
	s.Kill()
	checkGoroutines(t, base)
}

// TestFaultSlow stops the server with SIGSTOP: every call returns within
// its timeout, with an error; after SIGCONT decisions go on.
func TestFaultSlow(t *testing.T) {
	longTest(t)
	base := runtime.NumGoroutine()
	s := redistest.Start(t)
	c := faultClient(t, s.Addr)
	l, _ := NewWindow(c, "s", 10, time.Second, WithTimeout(faultTimeout))
	tt, _ := NewTwoTier(c, "st", 100, time.Second, 40, WithTimeout(faultTimeout), WithBatch(5), WithLease(20*time.Millisecond))
	if _, err := l.Allow(bg, "k"); err != nil {
		t.Fatal(err)
	}
	if ok, err := tt.Allow(bg, "h"); !ok || err != nil {
		t.Fatal(ok, err)
	}
	held := tt.pool("h")
	s.Stop()
	// While the server is stopped, a TwoTier admits at most the units it
	// holds, within their lease.
	admitted := int64(0)
	for range 10 {
		if ok, _ := tt.Allow(bg, "h"); ok {
			admitted++
		}
	}
	if admitted > held {
		t.Fatalf("TwoTier admitted %d with the server stopped, holding %d", admitted, held)
	}
	for range 3 {
		within(t, faultTimeout+slack, "Limiter, server stopped", func() {
			var ne net.Error
			if _, err := l.Allow(bg, "k"); !errors.Is(err, context.DeadlineExceeded) && !(errors.As(err, &ne) && ne.Timeout()) {
				t.Fatalf("server stopped: %v", err)
			}
		})
	}
	within(t, faultTimeout+slack, "TwoTier, server stopped", func() {
		if ok, err := tt.Allow(bg, "k"); ok || err == nil {
			t.Fatalf("TwoTier, server stopped: %v %v", ok, err)
		}
	})
	s.Continue()
	time.Sleep(110 * time.Millisecond)
	if ok, err := l.Allow(bg, "k"); err != nil || !ok {
		t.Fatalf("after SIGCONT: %v %v", ok, err)
	}
	if ok, err := tt.Allow(bg, "k"); err != nil || !ok {
		t.Fatalf("TwoTier after SIGCONT: %v %v", ok, err)
	}
	c.Close()
	s.Kill()
	checkGoroutines(t, base)
}

// TestFaultClusterFailover kills the master holding a key in a cluster of
// three masters with a replica each: decisions on it fail, closed and
// within their timeout, until the replica takes over; then they go on
// from the replicated state, matching package gcra's Step. A call that
// failed may still have run (on a loaded machine its reply can come after
// its timeout, from the promoted replica): each failure adds the state it
// would have left as one the next decision may start from, so the bound
// counts it as spent, and a decision matching none of them (the state lost,
// or a unit given twice) fails the test.
func TestFaultClusterFailover(t *testing.T) {
	longTest(t)
	cl := redistest.StartCluster(t, 3, 1)
	c := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: cl.Addrs(), ContextTimeoutEnabled: true,
		DialTimeout: faultTimeout, MaxRedirects: 3})
	t.Cleanup(func() { c.Close() })
	const events, burst = 10, 5
	l, _ := NewGCRA(c, "fo:", events, time.Second, burst, WithTimeout(faultTimeout), WithGrace(time.Hour))
	ref, _ := newGoGCRA(events, time.Second, burst)
	now := time.Now().UnixNano()
	tats := []uint64{0} // the states the calls so far may have left
	step := func() error {
		got, err := l.allowNAt(bg, "k", now, 1)
		var nexts []uint64
		var wants []result
		for _, tat := range tats {
			next, want, _ := stepGoGCRA(ref, tat, now, 1)
			if err != nil || got == want {
				nexts = append(nexts, next)
			}
			wants = append(wants, want)
		}
		if err != nil {
			if got.OK {
				t.Fatalf("at %d: admitted with %v", now, err)
			}
			nexts = append(nexts, tats...)
		} else if len(nexts) == 0 {
			t.Fatalf("at %d: %+v, want one of %+v", now, got, wants)
		}
		slices.Sort(nexts)
		tats = slices.Compact(nexts)
		return err
	}
	// decide steps until a call succeeds: with every master up, a call
	// fails only by outlasting its timeout on a loaded machine.
	decide := func() {
		for deadline := time.Now().Add(5 * time.Second); ; {
			err := step()
			if err == nil {
				return
			}
			if time.Now().After(deadline) {
				t.Fatal(err)
			}
		}
	}
	for range 4 {
		decide()
	}
	m, err := c.MasterForKey(bg, l.keyOf("k"))
	if err != nil {
		t.Fatal(err)
	}
	var master *redistest.Server
	for _, n := range cl.Nodes {
		if n.Addr == m.Options().Addr {
			master = n
		}
	}
	// Wait until a replica holds the state, then kill the master.
	want, _ := master.Do("GET", l.keyOf("k"))
	deadline := time.Now().Add(15 * time.Second)
	for replicated := false; !replicated; {
		for _, n := range cl.Nodes {
			v, err := n.DoSeq([]string{"READONLY"}, []string{"GET", l.keyOf("k")})
			replicated = replicated || (n != master && err == nil && v == want)
		}
		if time.Now().After(deadline) {
			t.Fatal("no replica got the key's state")
		}
		time.Sleep(20 * time.Millisecond)
	}
	master.Kill()
	failed := 0
	deadline = time.Now().Add(20 * time.Second)
	for {
		var err error
		within(t, 2*faultTimeout+slack, "a decision during the failover", func() { err = step() })
		if err == nil {
			break
		}
		failed++
		if time.Now().After(deadline) {
			t.Fatalf("no recovery in 20s: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for range 6 {
		now += 50e6
		decide()
	}
	t.Logf("%d decisions failed (closed) during the failover; %d states possible after", failed, len(tats))
}

// TestFaultStoppedBound keeps two goroutines asking a Limiter and a
// TwoTier while the server is stopped with SIGSTOP and then continued: the
// calls that timed out were denied, and those the server runs when it
// continues take units no one is given, so the admissions of the whole run
// keep the exact bound (the Limiter's rate is one a minute: its burst).
func TestFaultStoppedBound(t *testing.T) {
	longTest(t)
	s := redistest.Start(t)
	c := faultClient(t, s.Addr)
	t.Cleanup(func() { c.Close() })
	const gburst, events, tburst = 5, 2, 20
	l, _ := NewGCRA(c, "sb", 1, time.Minute, gburst, WithTimeout(faultTimeout))
	tt, _ := NewTwoTier(c, "sbt", events, time.Second, tburst, WithTimeout(faultTimeout))
	var gcraOK, errs atomic.Int64
	var mu sync.Mutex
	var adm []admission
	stop := make(chan struct{})
	var wg sync.WaitGroup
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
				if ok, err := l.Allow(bg, "k"); ok {
					gcraOK.Add(1)
				} else if err != nil {
					errs.Add(1)
				}
				r, at, err := tt.allow(bg, "k", 1)
				if r.OK {
					mu.Lock()
					adm = append(adm, admission{at: at, n: 1})
					mu.Unlock()
				} else if err != nil {
					errs.Add(1)
				}
				time.Sleep(time.Millisecond)
			}
		}()
	}
	time.Sleep(200 * time.Millisecond)
	s.Stop()
	time.Sleep(500 * time.Millisecond)
	s.Continue()
	time.Sleep(300 * time.Millisecond)
	close(stop)
	wg.Wait()
	t.Logf("Limiter: %d admitted (bound %d); TwoTier: %d admitted; %d errors", gcraOK.Load(), gburst, len(adm), errs.Load())
	if errs.Load() == 0 {
		t.Error("no call failed while the server was stopped")
	}
	if gcraOK.Load() > gburst {
		t.Errorf("the Limiter admitted %d, over its bound %d", gcraOK.Load(), gburst)
	}
	checkBound(t, adm, func(sum, span int64) bool { return sum*1e9 > tburst*1e9+events*span })
}
