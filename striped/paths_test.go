package striped

import (
	"sync"
	"sync/atomic"

	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cellrate/cellrate/internal/bucketcore"
	"github.com/cellrate/cellrate/limit"
)

// TestCacheTakeLosesItsCAS makes the compare-and-swap of an admission from
// a cache fail: between its load of the cache word and its CAS, another
// admission on the same cache takes a token (testHookPartial). The lost
// CAS must not admit by itself: the request goes to refill, which finds the
// cache holding enough ("another goroutine refilled this cache meanwhile")
// and takes its token there. Treating the failed CAS as a success, or
// refill not taking the token, leaves one token too many in the cache.
func TestCacheTakeLosesItsCAS(t *testing.T) {
	// One token a ms, burst 100: a borrows 41 at 0, its 40 cached slots
	// ending at 2ms..41ms. At 10.5ms the 30 starting at or after now are
	// usable: not all 40, so usable takes its division branch, and the
	// hook runs.
	l := mustNew(t, 1000, time.Second, 100, WithBatch(40))
	a := cacheN(l, 0)
	if !l.allowN(a, 0, 1).OK || a.w.Load()>>tokShift != 40 {
		t.Fatalf("setup: cache holds %d, want 40", a.w.Load()>>tokShift)
	}
	fired := 0
	testHookPartial = func() {
		if fired++; fired == 1 {
			w := a.w.Load()
			a.w.Store(29<<tokShift | w&genMask) // another admission took 1 of the 30
		}
	}
	defer func() { testHookPartial = nil }()
	r := l.allowN(a, 10_500_000, 1)
	if fired == 0 {
		t.Fatal("the hook never ran: the test no longer reaches the lost CAS")
	}
	if k := a.w.Load() >> tokShift; !r.OK || k != 28 || r.Remaining != 28 {
		t.Fatalf("after a lost CAS: %+v, cache holds %d; want admitted with 28 left of the 29", r, k)
	}
	if w := a.w.Load(); w&1 != 0 {
		t.Fatalf("cache left closed: word %#x", w)
	}
}

// TestRefillFindsCacheRefilled runs refill on a cache that already holds
// enough usable tokens, as a caller parked on the cache's lock finds it
// after the owner's refill: it must take its n from them.
func TestRefillFindsCacheRefilled(t *testing.T) {
	l := mustNew(t, 1000, time.Second, 100, WithBatch(40))
	a := cacheN(l, 0)
	l.allowN(a, 0, 1) // a holds 40, all usable at 0
	gen := a.w.Load() & genMask
	borrows := l.borrows.Load()
	r, _ := l.refill(a, 0, 3)
	w := a.w.Load()
	if !r.OK || r.Remaining != 37 || w>>tokShift != 37 || w&genMask != gen+2 {
		t.Fatalf("refill of 3 on a cache of 40: %+v, word %#x (gen %d before); want 37 left, generation %d", r, w, gen, gen+2)
	}
	if l.borrows.Load() != borrows {
		t.Fatal("refill borrowed although the cache held enough")
	}
}

// TestEarlyCacheMeansEmptyBucket checks the invariant refill relies on to
// deny at once when a now is before all of a cache's slots ("early"): the
// shared bucket holds no whole token at that now. Over random schedules
// with stale nows and several caches, every time a cache is early at the
// now it is asked at, the shared bucket's Remaining at that now is 0.
func TestEarlyCacheMeansEmptyBucket(t *testing.T) {
	seeds, ops := 60, 3000
	if testing.Short() {
		seeds, ops = 20, 1500
	}
	early := 0
	for seed := range seeds {
		r := rand.New(rand.NewPCG(uint64(seed), 23))
		l := randomLimiter(t, r)
		events, period := l.ps.Rate()
		step := max(1, int64(period)/events)
		now := r.Int64N(1<<40) - 1<<39
		for range ops {
			c := cacheN(l, r.IntN(4))
			at := now
			// Demand about the rate keeps loans coming from a bucket near
			// empty, so that a slightly stale now is before a recent
			// loan's empty time.
			switch r.IntN(4) {
			case 0:
				at -= r.Int64N(4 * step)
			case 1:
				at -= r.Int64N(2 * step * l.ps.Burst())
			default:
				now += r.Int64N(2 * step)
				at = now
			}
			if w := c.w.Load(); w&1 == 0 {
				if _, e := l.usable(w>>tokShift, c.end(), at); e {
					early++
					t0, d0 := l.state.Load()
					if got := l.ps.Remaining(bucketcore.State{T: t0, Deficit: d0}, at); got != 0 {
						t.Fatalf("seed %d: a cache is early at %d while the shared bucket holds %d tokens", seed, at, got)
					}
				}
			}
			n := int64(1)
			if r.IntN(4) == 0 {
				n = 1 + r.Int64N(l.ps.Burst())
			}
			l.allowN(c, at, n)
		}
	}
	if early < 1000 {
		t.Fatalf("only %d early requests: the schedules test little", early)
	}
}

// TestEndOfTimeLoanNotCached: a loan whose last slot would end past
// math.MaxInt64 is not cached. Were its end saturated to MaxInt64 and
// cached, the cached tokens would look usable at a stale now within burst/r
// of the end, and admit on top of a full burst taken there.
func TestEndOfTimeLoanNotCached(t *testing.T) {
	// One token a ns, burst 10: b takes the whole bucket at MaxInt64-10;
	// at MaxInt64 it has refilled, and a borrows 1 + a batch of 9, whose
	// slots end at MaxInt64+10.
	l := mustNew(t, 1, time.Nanosecond, 10, WithBatch(9), WithIdleAfter(time.Hour))
	a, b := cacheN(l, 0), cacheN(l, 1)
	var adm []admission
	ask := func(c *cache, now, n int64) {
		if l.allowN(c, now, n).OK {
			adm = append(adm, admission{now, n})
		}
	}
	ask(b, math.MaxInt64-10, 10)
	ask(a, math.MaxInt64, 1)
	for back := int64(10); back >= 0; back-- {
		ask(a, math.MaxInt64-back, 1)
		ask(b, math.MaxInt64-back, 1)
	}
	if len(adm) < 2 {
		t.Fatalf("admitted %v: the setup failed", adm)
	}
	if err := checkBound(l, adm); err != nil {
		t.Fatalf("%v: %v", adm, err)
	}
}

// TestRemaining: a cache's usable tokens plus the shared bucket's, which
// a request on that cache could take.
func TestRemaining(t *testing.T) {
	l := mustNew(t, 10, time.Second, 8, WithBatch(3))
	a, b := cacheN(l, 0), cacheN(l, 1)
	l.allowN(a, 0, 1) // a holds 3, the bucket 4
	for _, c := range []struct {
		c    *cache
		now  int64
		want int64
	}{{a, 0, 7}, {b, 0, 4}, {a, 100e6, 8}, {b, 100e6, 5}} {
		v, s := l.look(c.c, c.now)
		if got := int64(v) + l.ps.Remaining(s, c.now); got != c.want {
			t.Errorf("at %d: %d, want %d", c.now, got, c.want)
		}
		if tok := float64(v) + l.ps.Tokens(s, c.now); tok != float64(c.want) {
			t.Errorf("tokens at %d: %v, want %d", c.now, tok, c.want)
		}
		// A request for exactly that much is admitted, one more is not.
		if r := l.allowN(c.c, c.now, c.want+1); r.OK && c.want < 8 {
			t.Errorf("at %d: %d admitted with %d remaining", c.now, c.want+1, c.want)
		}
	}
}

// TestRefund: a refund of an admission its cache served restores the cache
// word exactly; one after another admission gives back nothing; one of an
// admission that borrowed puts the borrowed tokens back into the cache,
// never more than the bucket and the cache held before.
func TestRefund(t *testing.T) {
	l := mustNew(t, 1000, time.Second, 100, WithBatch(40))
	a := cacheN(l, 0)
	take := func(now, n int64) limit.Receipt {
		t.Helper()
		r, rc := l.takeAt(a, 0, now, n)
		if !r.OK {
			t.Fatalf("take of %d at %d denied: %+v", n, now, r)
		}
		return rc
	}
	left := func(now int64) int64 {
		v, s := l.look(a, now)
		return int64(v) + l.ps.Remaining(s, now)
	}
	// The first take borrows 3 + a batch of 40: the refund puts the 3
	// back into the cache, so 100 are there again, 43 of them cached.
	rc := take(0, 3)
	l.Refund(rc)
	if got, k := left(0), a.w.Load()>>tokShift; got != 100 || k != 43 {
		t.Fatalf("refund of a borrowing take: %d left, %d cached; want 100 and 43", got, k)
	}
	// Served by the cache: exact.
	w := a.w.Load()
	rc = take(0, 5)
	l.Refund(rc)
	if a.w.Load() != w {
		t.Fatalf("refund of a cached take: word %#x, want %#x", a.w.Load(), w)
	}
	// Another admission in between: nothing.
	rc = take(0, 5)
	take(0, 1)
	l.Refund(rc)
	if got := left(0); got != 94 {
		t.Fatalf("refund after a later take: %d left, want 94", got)
	}
	// Refunding twice, or a zero receipt, gives nothing more.
	rc = take(0, 2)
	l.Refund(rc)
	l.Refund(rc)
	l.Refund(limit.Receipt{})
	if got := left(0); got != 94 {
		t.Fatalf("double refund: %d left, want 94", got)
	}
	// Through refill's "refilled meanwhile" branch (the lost CAS of
	// TestCacheTakeLosesItsCAS): the word as it was before the refill.
	l = mustNew(t, 1000, time.Second, 100, WithBatch(40))
	a = cacheN(l, 0)
	take(0, 1)
	fired := 0
	testHookPartial = func() {
		if fired++; fired == 1 {
			a.w.Store(29<<tokShift | a.w.Load()&genMask)
		}
	}
	defer func() { testHookPartial = nil }()
	w29 := 29<<tokShift | a.w.Load()&genMask
	rc = take(10_500_000, 1)
	l.Refund(rc)
	if fired == 0 || a.w.Load() != w29 {
		t.Fatalf("refund through refill: word %#x, want %#x", a.w.Load(), w29)
	}
}

// TestConcurrentRefund: goroutines take and refund, at once and later, on
// one limiter with a shared clock; the admissions not refunded stay within
// the bound.
func TestConcurrentRefund(t *testing.T) {
	l := mustNew(t, 500, time.Microsecond, 500, WithBatch(20), WithIdleAfter(minIdle))
	var clock atomic.Int64
	const G = 6
	iters := 4000
	if testing.Short() {
		iters = 1500
	}
	logs := make([][]admission, G)
	var wg sync.WaitGroup
	for g := range G {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 31))
			var held []limit.Receipt
			for range iters {
				now := clock.Add(rng.Int64N(5))
				n := 1 + rng.Int64N(4)
				r, rc, _ := l.TakeAt(now, n)
				if !r.OK {
					continue
				}
				switch {
				case rng.IntN(3) == 0:
					l.Refund(rc)
					continue
				case rng.IntN(4) == 0:
					held = append(held, rc)
					continue
				}
				if len(held) > 0 && rng.IntN(3) == 0 {
					l.Refund(held[0])
					held = held[1:]
				}
				logs[g] = append(logs[g], admission{now, n})
			}
		})
	}
	wg.Wait()
	var all []admission
	for _, lg := range logs {
		all = append(all, lg...)
	}
	if err := checkBound(l, all); err != nil {
		t.Fatal(err)
	}
}
