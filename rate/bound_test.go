package rate_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cellrate/cellrate/internal/bound"
	"github.com/cellrate/cellrate/rate"
)

// TestBoundConcurrent: goroutines call AllowN and ReserveN (cancelling some)
// with times that arrive out of order, and every admission, reservations at
// their time to act, stays within burst + rate*t exactly. Cancelled
// reservations are not counted: a cancel that gave nothing back only makes
// the limiter admit less.
func TestBoundConcurrent(t *testing.T) {
	const burst, goroutines = 5, 4
	calls := 4000
	if testing.Short() {
		calls = 1000
	}
	for _, every := range []time.Duration{3 * time.Millisecond, 7 * time.Microsecond, time.Second / 3} {
		l := rate.NewLimiter(rate.Every(every), burst)
		var clock atomic.Int64 // ns after t0
		var mu sync.Mutex
		var uses []bound.Use
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Go(func() {
				r := rand.New(rand.NewPCG(uint64(g), 7))
				var mine []bound.Use
				for range calls {
					ns := clock.Add(r.Int64N(int64(every))) - r.Int64N(int64(every)*2) // up to 2 tokens stale
					now := t0.Add(time.Duration(ns))
					n := 1 + r.IntN(3)
					switch r.IntN(4) {
					case 0:
						res := l.ReserveN(now, n)
						if !res.OK() {
							continue
						}
						if r.IntN(3) == 0 {
							res.CancelAt(now)
							continue
						}
						mine = append(mine, bound.Use{At: ns + int64(res.DelayFrom(now)), Cost: int64(n), Kind: "reserve"})
					default:
						if l.AllowN(now, n) {
							mine = append(mine, bound.Use{At: ns, Cost: int64(n), Kind: "allow"})
						}
					}
				}
				mu.Lock()
				uses = append(uses, mine...)
				mu.Unlock()
			})
		}
		wg.Wait()
		if len(uses) < calls/10 {
			t.Errorf("every %v: only %d admissions", every, len(uses))
		}
		if err := bound.Check(uses, burst, 1, uint64(every)); err != nil {
			t.Errorf("every %v: %v", every, err)
		}
	}
}

// TestBoundCheckSeesExcess: the same check fails for a limiter that admits
// one token more than its burst.
func TestBoundCheckSeesExcess(t *testing.T) {
	l := rate.NewLimiter(10, 3)
	var uses []bound.Use
	for i := range 3 {
		if l.AllowN(t0, 1) {
			uses = append(uses, bound.Use{At: int64(i), Cost: 1})
		}
	}
	if err := bound.Check(uses, 3, 1, uint64(d)); err != nil {
		t.Fatal(err)
	}
	if bound.Check(uses, 2, 1, uint64(d)) == nil {
		t.Error("3 admissions at once passed a burst of 2")
	}
}

// TestZeroLimitConcurrent: at limit 0 exactly the burst is admitted, however
// many goroutines ask.
func TestZeroLimitConcurrent(t *testing.T) {
	l := rate.NewLimiter(0, 100)
	var ok atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				if l.Allow() {
					ok.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if ok.Load() != 100 {
		t.Errorf("%d admitted at limit 0, burst 100", ok.Load())
	}
}

// TestSettersConcurrent: decisions, reservations, cancels and waits run
// while SetLimit and SetBurst cycle through every kind of setting (run it
// under -race). Whatever the interleaving, a decision sees one setting
// whole: Inf admits n > burst, a zero limit with an empty pool and burst 0
// admit nothing but n = 0.
func TestSettersConcurrent(t *testing.T) {
	l := rate.NewLimiter(10, 3)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 3 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 9))
			for {
				select {
				case <-stop:
					return
				default:
				}
				now := time.Now()
				switch r.IntN(5) {
				case 4:
					ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
					l.WaitN(ctx, 1)
					cancel()
				case 0:
					l.AllowN(now, r.IntN(4))
				case 1:
					res := l.ReserveN(now, 1+r.IntN(2))
					if r.IntN(2) == 0 {
						res.Cancel()
					}
				case 2:
					l.Allow()
				case 3:
					l.TokensAt(now)
				}
			}
		})
	}
	settings := []struct {
		r rate.Limit
		b int
	}{{10, 3}, {0, 3}, {1e6, 2}, {rate.Inf, 3}, {0, 0}, {5, 0}, {0, 4}, {1e3, 4}, {rate.Inf, 0}, {20, 5}}
	rounds := 2000
	if testing.Short() {
		rounds = 300
	}
	for i := range rounds {
		s := settings[i%len(settings)]
		l.SetLimit(s.r)
		l.SetBurst(s.b)
		if l.Limit() != s.r || l.Burst() != s.b {
			t.Fatalf("set %v, %d: read %v, %d", s.r, s.b, l.Limit(), l.Burst())
		}
	}
	close(stop)
	wg.Wait()
}

func TestAllocs(t *testing.T) {
	l := rate.NewLimiter(1e9, 1e9)
	now := time.Now()
	for name, f := range map[string]func(){
		"Allow":     func() { l.Allow() },
		"AllowN(1)": func() { l.AllowN(now, 1) },
		"AllowN(3)": func() { l.AllowN(now, 3) },
	} {
		if a := testing.AllocsPerRun(1000, f); a != 0 {
			t.Errorf("%s: %v allocations", name, a)
		}
	}
	// Reserve allocates the *Reservation it returns, as x/time/rate's
	// does, and nothing more, for a finite, a zero and an infinite Limit.
	var r *rate.Reservation
	for _, lim := range []*rate.Limiter{l, rate.NewLimiter(0, 1<<20), rate.NewLimiter(rate.Inf, 0)} {
		if a := testing.AllocsPerRun(1000, func() { r = lim.ReserveN(now, 1) }); a != 1 {
			t.Errorf("ReserveN at Limit %v: %v allocations, want 1", lim.Limit(), a)
		}
	}
	_ = r
}
