package limit_test

import (
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cellrate/cellrate/gcra"
	"github.com/cellrate/cellrate/internal/bound"
	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/step"
	"github.com/cellrate/cellrate/window"
)

// TestAllMatchesSteps runs random schedules through an All of a per-key
// GCRA, a global GCRA and a sliding window, one goroutine, and checks every
// decision against the members' pure steps: admitted iff every member's step
// admits, each member then in its step's next state, and otherwise every
// member exactly as before (the refunds leave nothing taken).
func TestAllMatchesSteps(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for run := range 20 {
		ke, kper, kb := 1+rng.Int64N(5), time.Duration(1+rng.Int64N(1e6)), 1+rng.Int64N(6)
		ge, gper, gb := 1+rng.Int64N(5), time.Duration(1+rng.Int64N(1e6)), 1+rng.Int64N(6)
		key, _ := gcra.New(ke, kper, kb)
		global, _ := gcra.New(ge, gper, gb)
		win, _ := window.New(1+rng.Int64N(8), time.Duration(1+rng.Int64N(1e6)))
		members := []limit.Member{key, win, global}
		rng.Shuffle(len(members), func(i, j int) { members[i], members[j] = members[j], members[i] })
		all, err := limit.NewAll(members...)
		if err != nil {
			t.Fatal(err)
		}
		// The GCRAs' states are the steps' run on the side: a member left
		// in any other state decides differently later on.
		kp, _ := step.NewGCRA(ke, kper, kb)
		gp, _ := step.NewGCRA(ge, gper, gb)
		wp := win.Params()
		var kS, gS step.GCRAState
		now := rng.Int64N(1 << 50)
		for i := range 500 {
			now += rng.Int64N(2e5) - 2e4 // sometimes stale
			n := 1 + rng.Int64N(3)
			ks, rk, kerr := kp.Step(kS, now, n)
			gs, rg, gerr := gp.Step(gS, now, n)
			ws, rw, werr := wp.Step(win.State(), now, n)
			want := rk.OK && rg.OK && rw.OK && kerr == nil && gerr == nil && werr == nil
			w0 := win.State()
			r, err := all.AllowNAt(now, n)
			if r.OK != want {
				t.Fatalf("run %d op %d (now %d, n %d): All %+v %v; members %+v %+v %+v", run, i, now, n, r, err, rk, rg, rw)
			}
			if want {
				kS, gS = ks, gs
				if win.State() != ws {
					t.Fatalf("run %d op %d: the window not in its step's state", run, i)
				}
				if m := min(rk.Remaining, rg.Remaining, rw.Remaining); r.Remaining != m {
					t.Fatalf("run %d op %d: Remaining %d, want %d", run, i, r.Remaining, m)
				}
			} else if win.State() != w0 {
				t.Fatalf("run %d op %d: a denied request left units taken", run, i)
			}
			_, kr, _ := kp.Step(kS, now, 0)
			_, gr, _ := gp.Step(gS, now, 0)
			if key.RemainingAt(now) != kr.Remaining || global.RemainingAt(now) != gr.Remaining {
				t.Fatalf("run %d op %d: a GCRA holds %d and %d, its steps %d and %d", run, i, key.RemainingAt(now), global.RemainingAt(now), kr.Remaining, gr.Remaining)
			}
		}
	}
}

// TestAllConcurrentBound: goroutines share a global limit and four per-key
// limits, each request through an All of its key's limit and the global
// one, some straight to one member; every member's bound holds over all
// the admissions it made, with the composition's counted in each member.
func TestAllConcurrentBound(t *testing.T) {
	const K, G = 4, 8
	const kEvents, kPeriod, kBurst = 2, int64(10_000), 3
	const gLimit, gWindow = 5, int64(10_000)
	keys := make([]*gcra.Limiter, K)
	for i := range keys {
		keys[i], _ = gcra.New(kEvents, time.Duration(kPeriod), kBurst)
	}
	global, _ := window.New(gLimit, time.Duration(gWindow))
	alls := make([]*limit.All, K)
	for i := range alls {
		alls[i], _ = limit.NewAll(keys[i], global) // the shared one last
	}
	iters := 4000
	if testing.Short() {
		iters = 1500
	}
	var clock atomic.Int64
	keyUses := make([][][]bound.Use, G)
	globalUses := make([][]bound.Use, G)
	var composed atomic.Int64
	var wg sync.WaitGroup
	for g := range G {
		keyUses[g] = make([][]bound.Use, K)
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 3))
			k := g % K
			for range iters {
				now := clock.Add(rng.Int64N(300))
				if rng.IntN(10) == 0 {
					now -= rng.Int64N(2 * kPeriod) // stale
				}
				n := 1 + rng.Int64N(2)
				switch rng.IntN(8) {
				case 0:
					if r, _ := keys[k].AllowNAt(now, n); r.OK {
						keyUses[g][k] = append(keyUses[g][k], bound.Use{At: now, Cost: n})
					}
				case 1:
					if r, _ := global.AllowNAt(now, n); r.OK {
						globalUses[g] = append(globalUses[g], bound.Use{At: now, Cost: n})
					}
				default:
					if r, _ := alls[k].AllowNAt(now, n); r.OK {
						keyUses[g][k] = append(keyUses[g][k], bound.Use{At: now, Cost: n, Kind: "all"})
						globalUses[g] = append(globalUses[g], bound.Use{At: now, Cost: n, Kind: "all"})
						composed.Add(1)
					}
				}
			}
		})
	}
	wg.Wait()
	if composed.Load() == 0 {
		t.Fatal("the composition admitted nothing")
	}
	for k := range K {
		var uses []bound.Use
		for g := range G {
			uses = append(uses, keyUses[g][k]...)
		}
		if err := bound.Check(uses, kBurst, kEvents, uint64(kPeriod)); err != nil {
			t.Fatalf("key %d: %v", k, err)
		}
	}
	if err := bound.Check(slices.Concat(globalUses...), 2*gLimit, gLimit, uint64(gWindow)); err != nil {
		t.Fatalf("global: %v", err)
	}
}

func TestAllZeroAllocs(t *testing.T) {
	key, _ := gcra.New(1, time.Second, 2)
	global, _ := window.New(3, time.Second)
	all, _ := limit.NewAll(key, global)
	now := int64(0)
	if a := testing.AllocsPerRun(1000, func() {
		now += 1e8
		all.AllowAt(now)
		_, _ = all.AllowNAt(now, 2)
	}); a != 0 {
		t.Fatalf("%v allocations per run", a)
	}
	// Every decision refunded: the global limits deny.
	win, _ := window.New(1, time.Hour)
	win.AllowAt(0)
	g2, _ := gcra.New(1, time.Hour, 1)
	g2.AllowAt(0)
	for _, m := range []limit.Member{win, g2} {
		key, _ := gcra.New(1, time.Hour, 1) // admits at 1, once
		all, _ := limit.NewAll(key, m)
		if a := testing.AllocsPerRun(1000, func() {
			if all.AllowAt(1) {
				t.Fatal("admitted")
			}
		}); a != 0 {
			t.Fatalf("%v allocations per refunded run", a)
		}
		if !key.AllowAt(1) {
			t.Fatal("the refunds left the key's unit taken")
		}
	}
}
