package redis

import (
	"context"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/cellrate/cellrate/redis/internal/redistest"
)

// TestBatchedDecisions: 16 goroutines decide at once on one Limiter, each
// on its own key at its own times, so decisions go in batches; every
// result is the Go step's for that key (a reply given to the wrong caller
// or lost would show), on one server and on a cluster.
func TestBatchedDecisions(t *testing.T) {
	_, c := server(t)
	clients := map[string]Client{"server": c}
	if !testing.Short() {
		clients["cluster"] = redistest.StartCluster(t, 3, 0).Client(t)
	}
	for name, c := range clients {
		l, err := NewGCRA(c, "bd:", 7, time.Second, 3, WithGrace(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		ref, _ := newGoGCRA(7, time.Second, 3)
		base := time.Now().UnixNano()
		var wg sync.WaitGroup
		for g := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				key := "k" + strconv.Itoa(g)
				var tat uint64
				now := base
				for i := range 200 {
					now += int64(i%5) * 40e6
					n := int64(1 + (i+g)%3)
					next, want, _ := stepGoGCRA(ref, tat, now, n)
					got, err := l.allowNAt(bg, key, now, n)
					if err != nil || got != want {
						t.Errorf("%s key %s decision %d: %+v %v, want %+v", name, key, i, got, err, want)
						return
					}
					tat = next
				}
			}()
		}
		wg.Wait()
	}
}

// TestBatchesExact: 64 goroutines (24 under -short) decide on one Limiter
// at once, each on its own key at its own times and costs, so up to lanes
// batches are in flight and many decisions queue and are handed over. It
// fails if a decision is lost (its caller hangs or gets no reply), sent
// twice (its key's state moves twice, and the server counts more calls
// than decisions), or given another's reply (its result is not the Go
// step's for its key); and if a lane is left taken or a decision left
// queued when all is done.
func TestBatchesExact(t *testing.T) {
	s, c := server(t)
	l, err := NewGCRA(c, "be:", 7, time.Second, 40, WithGrace(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := newGoGCRA(7, time.Second, 40)
	base := time.Now().UnixNano()
	if _, err := l.allowNAt(bg, "warm", base, 1); err != nil { // loads the library
		t.Fatal(err)
	}
	if _, err := s.Do("CONFIG", "RESETSTAT"); err != nil {
		t.Fatal(err)
	}
	workers, per := 64, 150
	if testing.Short() {
		workers, per = 24, 60
	}
	var wg sync.WaitGroup
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := "k" + strconv.Itoa(g)
			var tat uint64
			now := base
			for i := range per {
				now += int64((i*g)%7) * 30e6
				n := int64(1 + (i+g)%5)
				next, want, _ := stepGoGCRA(ref, tat, now, n)
				got, err := l.allowNAt(bg, key, now, n)
				if err != nil || got != want {
					t.Errorf("key %s decision %d: %+v %v, want %+v", key, i, got, err, want)
					return
				}
				tat = next
			}
		}()
	}
	waitAll(t, &wg, time.Minute)
	if t.Failed() {
		return
	}
	if calls := fcalls(t, s); calls != int64(workers*per) {
		t.Errorf("the server ran %d calls for %d decisions", calls, workers*per)
	}
	idle(t, l.batch)
}

// TestBatchesReturn: decisions whose contexts end at any point, on a
// server paused for a while under them, each return (with a reply or an
// error) and leave no lane taken: a batch's failure reaches every
// decision in it, and a queued one is never forgotten.
func TestBatchesReturn(t *testing.T) {
	s := redistest.Start(t)
	c := goredis.NewClient(&goredis.Options{Addr: s.Addr, ContextTimeoutEnabled: true,
		ReadTimeout: 200 * time.Millisecond, WriteTimeout: 200 * time.Millisecond})
	defer c.Close()
	l, err := NewGCRA(c, "br:", 1000, time.Second, 100)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var ok, failed atomic.Int64
	for g := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := "k" + strconv.Itoa(g%4)
			for i := range 40 {
				ctx, cancel := context.WithTimeout(bg, time.Duration((g*i)%9)*time.Millisecond)
				if i%3 == 0 {
					cancel()
				}
				if _, err := l.Allow(ctx, key); err != nil {
					failed.Add(1)
				} else {
					ok.Add(1)
				}
				cancel()
				if g == 0 && i == 10 {
					s.Stop()
					time.Sleep(100 * time.Millisecond)
					s.Continue()
				}
			}
		}()
	}
	waitAll(t, &wg, time.Minute)
	if ok.Load() == 0 || failed.Load() == 0 {
		t.Errorf("%d decisions answered, %d failed: the test made no mix", ok.Load(), failed.Load())
	}
	idle(t, l.batch)
	if _, err := l.Allow(bg, "after"); err != nil {
		t.Errorf("after: %v", err)
	}
}

// waitAll waits for wg, failing with every goroutine's stack if it takes
// longer than d (a decision that hangs).
func waitAll(t *testing.T, wg *sync.WaitGroup, d time.Duration) {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
		buf := make([]byte, 1<<20)
		t.Fatalf("decisions still waiting after %v:\n%s", d, buf[:runtime.Stack(buf, true)])
	}
}

// idle fails unless q has no batch in flight and nothing queued.
func idle(t *testing.T, q *batcher) {
	t.Helper()
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.flying != 0 || len(q.queue) != 0 {
		t.Errorf("after every decision returned: %d batches in flight, %d queued", q.flying, len(q.queue))
	}
}

// fcalls is the FCALL calls the server ran since RESETSTAT.
func fcalls(t *testing.T, s *redistest.Server) int64 {
	info, err := s.Do("INFO", "commandstats")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "cmdstat_fcall:calls="); ok {
			v, _, _ = strings.Cut(v, ",")
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}

// TestShortForm: a decision at the server's time sends n alone (and a
// window's limit); the scripts read it as the full form's n at mode 0.
func TestShortForm(t *testing.T) {
	_, c := server(t)
	g, _ := NewGCRA(c, "sf:", 1, time.Hour, 10)
	w, _ := NewWindow(c, "sw:", 10, time.Hour)
	for _, l := range []*Limiter{g, w} {
		b := &argBuf{}
		b.args = decisionArgs(b.args, false, 0, 3, false, false)
		if len(b.args) != 1 {
			t.Fatalf("a decision at the server's time sends %v", b.args)
		}
		for i, step := range []struct {
			n    int64
			ok   bool
			left int64
		}{{3, true, 7}, {0, true, 7}, {8, false, 7}, {7, true, 0}, {1, false, 0}} {
			r, err := l.AllowN(bg, "k", step.n)
			if err != nil || r.OK != step.ok || r.Remaining != step.left {
				t.Fatalf("%s step %d: AllowN(%d) = %+v %v, want ok %v remaining %d", l.prefix, i, step.n, r, err, step.ok, step.left)
			}
		}
	}
}

// TestDecisionAllocs: a decision at the server's time, alone, allocates
// at most 8 times (go-redis's command, its reply and its pool's health
// check, and the key), GCRA and window alike. (Not under the race
// detector, whose sync.Pool drops a share of what is put back.)
func TestDecisionAllocs(t *testing.T) {
	if raceBuild() {
		t.Skip("allocations are not counted under -race")
	}
	_, c := server(t)
	g, _ := NewGCRA(c, "da:", 1e8, time.Second, 1<<17)
	w, _ := NewWindow(c, "dw:", 1<<30, time.Hour)
	for _, l := range []*Limiter{g, w} {
		l.AllowN(bg, "k", 1)
		if n := testing.AllocsPerRun(500, func() { l.AllowN(bg, "k", 1) }); n > 8 {
			t.Errorf("%s AllowN: %v allocations a decision", l.prefix, n)
		}
	}
}

// raceBuild reports a test binary built with -race.
func raceBuild() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" && s.Value == "true" {
			return true
		}
	}
	return false
}

// TestBatchLeaderGone: a batch whose first decision's caller has given up
// (its context cancelled) still answers the others in it: one client gone
// must not fail other users' decisions.
func TestBatchLeaderGone(t *testing.T) {
	s := redistest.Start(t)
	c := goredis.NewClient(&goredis.Options{Addr: s.Addr, ContextTimeoutEnabled: true})
	defer c.Close()
	l, err := NewGCRA(c, "bl:", 1000, time.Second, 100)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Allow(bg, "warm"); err != nil {
		t.Fatal(err)
	}
	q := l.batch
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
			q.mu.Lock()
			ok := cond()
			q.mu.Unlock()
			if ok {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("no %s in 10s", what)
			}
		}
	}
	s.Stop()
	defer s.Continue()
	errs := make(chan error, lanes+3)
	for i := range lanes {
		go func() { _, err := l.Allow(bg, "f"+strconv.Itoa(i)); errs <- err }()
	}
	waitFor("lanes all taken", func() bool { return q.flying == lanes })
	gone, cancel := context.WithCancel(bg)
	go func() { l.Allow(gone, "gone"); errs <- nil }()
	waitFor("first queued", func() bool { return len(q.queue) == 1 })
	cancel()
	for i := range 2 {
		go func() { _, err := l.Allow(bg, "q"+strconv.Itoa(i)); errs <- err }()
	}
	waitFor("all queued", func() bool { return len(q.queue) == 3 })
	s.Continue()
	for range lanes + 3 {
		select {
		case err := <-errs:
			if err != nil {
				t.Errorf("a decision of a caller still there: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a decision did not return")
		}
	}
}
