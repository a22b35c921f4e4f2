package redis

import (
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/cellrate/cellrate/redis/internal/redistest"
)

// midTraffic runs 8 goroutines deciding on keys of their own (so their
// calls go in pipelines) at caller times, each decision against the Go
// step, while change runs between decisions from another goroutine until
// they are done; change returns false once it has no more to do. Gated,
// the changes run one after another and the deciders wait for all of them
// halfway through. It returns the Limiter.
func midTraffic(t *testing.T, c Client, prefix string, gated bool, change func(i int) bool) *Limiter {
	t.Helper()
	g, err := NewGCRA(c, prefix+"g:", 7, time.Second, 3, WithGrace(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := newGoGCRA(7, time.Second, 3)
	decisions := 120
	if testing.Short() {
		decisions = 60
	}
	var done atomic.Bool
	var lost, decided atomic.Int64
	var changer sync.WaitGroup
	changer.Add(1)
	gate := make(chan struct{})
	go func() {
		defer changer.Done()
		defer close(gate)
		for i := 0; !done.Load() && change(i); i++ {
			// Let a few decisions through before the next change.
			for d := decided.Load(); !gated && !done.Load() && decided.Load() < d+16; {
				runtime.Gosched()
			}
		}
	}()
	var wg sync.WaitGroup
	for k := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := "k" + strconv.Itoa(k)
			var tat uint64
			now := time.Now().UnixNano()
			for i := range decisions {
				if gated && i == decisions/2 {
					<-gate
				}
				now += int64(i%4) * 60e6
				n := int64(1 + i%3)
				next, want, _ := stepGoGCRA(ref, tat, now, n)
				got, err := g.allowNAt(bg, key, now, n)
				if missing(err) {
					// Flushed again between the load and the call
					// again: an error, and nothing decided (the next
					// decision shows it).
					lost.Add(1)
					continue
				}
				if err != nil || got != want {
					t.Errorf("%s decision %d: %+v %v, want %+v", key, i, got, err, want)
					return
				}
				tat = next
				decided.Add(1)
			}
		}()
	}
	wg.Wait()
	done.Store(true)
	changer.Wait()
	if n := lost.Load(); n > 0 {
		t.Logf("%d of %d decisions found no library after loading it", n, 8*decisions)
	}
	return g
}

// TestFunctionFlushMidTraffic: FUNCTION FLUSH (SYNC and ASYNC) sent again
// and again while pipelines of decisions run: every call that finds the
// library gone is decided once, exactly as the Go step decides it, or (if
// flushed again between its load and its call) fails having decided
// nothing.
func TestFunctionFlushMidTraffic(t *testing.T) {
	s, c := server(t)
	flushes := 0
	midTraffic(t, c, "flushmid:", false, func(i int) bool {
		mode := "SYNC"
		if i%2 == 1 {
			mode = "ASYNC"
		}
		if _, err := s.Do("FUNCTION", "FLUSH", mode); err != nil {
			t.Error(err)
			return false
		}
		flushes++
		return true
	})
	if flushes < 1 {
		t.Fatalf("%d flushes mid-traffic", flushes)
	}
}

// TestFunctionRefusedMidTraffic: a user whose ACL loses FUNCTION while
// decisions run, and whose library is then flushed, turns the Limiter to
// scripts mid-traffic; every decision before, during and after the switch
// is the Go step's.
func TestFunctionRefusedMidTraffic(t *testing.T) {
	s := redistest.Start(t)
	if _, err := s.Do("ACL", "SETUSER", "limited", "on", ">pw", "+@all", "~*"); err != nil {
		t.Fatal(err)
	}
	c := goredis.NewClient(&goredis.Options{Addr: s.Addr, Username: "limited", Password: "pw"})
	t.Cleanup(func() { c.Close() })
	l := midTraffic(t, c, "refusedmid:", true, func(i int) bool {
		var err error
		switch i {
		case 0:
			_, err = s.Do("ACL", "SETUSER", "limited", "-function")
		case 1:
			_, err = s.Do("FUNCTION", "FLUSH")
		default:
			return false
		}
		if err != nil {
			t.Error(err)
			return false
		}
		return true
	})
	if !l.eval.Load() {
		t.Fatal("the Limiter did not turn to scripts")
	}
}
