package striped

// Paths and edges the other tests left open, found by `make mutate`
// (MUTANTS.md). Each scenario drives chosen caches through the package's
// own paths with times picked so that a decision falls exactly on a
// boundary (a slot starting at now, a cache idle for exactly IdleAfter, a
// scan due exactly now); every expected result is worked out by hand in
// the comments, from the rules in the Limiter's doc.

import (
	"errors"
	"math"
	"math/big"
	"testing"
	"time"

	"github.com/cellrate/cellrate/limit"
)

const ms = int64(time.Millisecond)

// want checks one result against what the scenario's comment derives.
func want(t *testing.T, what string, got limit.Result, ok bool, remaining, retry int64) {
	t.Helper()
	if got.OK != ok || got.Remaining != remaining || got.RetryAfter != time.Duration(retry) {
		t.Fatalf("%s: got %+v, want OK %v, Remaining %d, RetryAfter %d", what, got, ok, remaining, retry)
	}
}

// offsets are the time origins the scenarios run at: their results must not
// depend on where in int64 time they happen (nor on the sign of the times).
var offsets = []int64{0, -1e18, 1e18, math.MinInt64 + 1e12, math.MaxInt64 - 1e12}

// TestCeilNs: ceilNs(j) is the whole ns j tokens take to refill,
// ceil(j*period/events), including rates whose token is not a whole number of ns.
func TestCeilNs(t *testing.T) {
	for _, c := range []struct {
		events int64
		period time.Duration
	}{{3, time.Second}, {7, time.Millisecond}, {1000, time.Second}, {3, time.Nanosecond}, {10, 7 * time.Nanosecond}} {
		l := mustNew(t, c.events, c.period, 1000)
		for _, j := range []uint64{1, 2, 3, 10, 999, 1000} {
			num := new(big.Int).Mul(new(big.Int).SetUint64(j), big.NewInt(int64(c.period)))
			q, m := new(big.Int).QuoRem(num, big.NewInt(c.events), new(big.Int))
			if m.Sign() != 0 {
				q.Add(q, big.NewInt(1))
			}
			if got := l.ceilNs(j); got != q.Int64() {
				t.Fatalf("%d per %v: ceilNs(%d) = %d, want %v", c.events, c.period, j, got, q)
			}
		}
	}
}

// TestTakeAtCosts: TakeAt refuses the costs AllowNAt refuses, admits the
// rest (0 and the whole burst included), and gives the zero Receipt for
// everything but an admission of n > 0 (limit.Member).
func TestTakeAtCosts(t *testing.T) {
	l := mustNew(t, 10, time.Second, 5)
	if r, rc, err := l.TakeAt(0, -1); !errors.Is(err, limit.ErrNegativeCost) || r.OK || r.RetryAfter != limit.Never || rc.N != 0 {
		t.Errorf("TakeAt(-1) = %+v, %+v, %v", r, rc, err)
	}
	if r, rc, err := l.TakeAt(0, 6); !errors.Is(err, limit.ErrCostExceedsBurst) || r.OK || r.RetryAfter != limit.Never || rc.N != 0 {
		t.Errorf("TakeAt(burst+1) = %+v, %+v, %v", r, rc, err)
	}
	if r, rc, err := l.TakeAt(0, 0); err != nil || !r.OK || rc != (limit.Receipt{}) {
		t.Errorf("TakeAt(0) = %+v, %+v, %v", r, rc, err)
	}
	if r, rc, err := l.TakeAt(0, 5); err != nil || !r.OK || rc.N != 5 || rc.At != 0 {
		t.Errorf("TakeAt(burst) on a full limiter = %+v, %+v, %v", r, rc, err)
	}
	if r, rc, err := l.TakeAt(0, 1); err != nil || r.OK || rc != (limit.Receipt{}) {
		t.Errorf("TakeAt(1) on an empty limiter = %+v, %+v, %v; want a denial with the zero Receipt", r, rc, err)
	}
}

// TestOptionEdges: the default IdleAfter is a quarter of burst/rate for a
// rate that is not a whole number of ns a token, and a batch of the whole
// burst is allowed.
func TestOptionEdges(t *testing.T) {
	l := mustNew(t, 3, time.Second, 12) // 12 tokens at 3 a second: 4s
	if got := l.IdleAfter(); got != time.Second {
		t.Errorf("default idle-after for 3/s, burst 12: %v, want 1s", got)
	}
	if l := mustNew(t, 3, time.Second, 12, WithBatch(12)); l.Batch() != 12 {
		t.Errorf("WithBatch(burst): batch %d", l.Batch())
	}
}

// TestTokensAtOneP: on one P, TokensAt is the calling P's cache plus the
// shared bucket with its fraction, and RemainingAt the whole tokens of it.
func TestTokensAtOneP(t *testing.T) {
	setGOMAXPROCS(t, 1)
	l := mustNew(t, 10, time.Second, 8, WithBatch(3))
	if !l.AllowAt(0) { // borrows 1 + 3: the cache holds 3, the bucket 4
		t.Fatal("first token denied")
	}
	for _, c := range []struct {
		now    int64
		tokens float64
		left   int64
	}{{0, 7, 7}, {50 * ms, 7.5, 7}, {100 * ms, 8, 8}} {
		if got := l.TokensAt(c.now); got != c.tokens {
			t.Errorf("TokensAt(%d) = %v, want %v", c.now, got, c.tokens)
		}
		if got := l.RemainingAt(c.now); got != c.left {
			t.Errorf("RemainingAt(%d) = %d, want %d", c.now, got, c.left)
		}
	}
}

func TestPerPGetBounds(t *testing.T) {
	var p perP[cell]
	if p.get(0) != nil || p.get(-1) != nil {
		t.Fatal("an empty table has a slot")
	}
	p.grow(2)
	n := len(p.all())
	if n < 3 || p.get(n-1) == nil || p.get(n) != nil || p.get(-1) != nil || p.get(math.MaxInt) != nil {
		t.Fatalf("a table of %d slots: get(%d) = %p, get(%d) = %p", n, n-1, p.get(n-1), n, p.get(n))
	}
}

// TestResultRemaining: Remaining is what the calling cache holds after the
// admission, whether the cache served it or a borrow did; a borrow covers
// only what the cache lacked (plus the batch).
func TestResultRemaining(t *testing.T) {
	l := mustNew(t, 1000, time.Second, 100, WithBatch(40))
	a := cacheN(l, 0)
	// Borrows 1 + 40 of the 100: the cache keeps 40.
	want(t, "first token", l.allowN(a, 0, 1), true, 40, 0)
	// Served by the cache.
	want(t, "3 from the cache", l.allowN(a, 0, 3), true, 37, 0)
	// 42 with 37 cached: borrows the 5 it lacks plus 40 (the bucket holds
	// 59), and the cache keeps those 40.
	want(t, "42 with 37 cached", l.allowN(a, 0, 42), true, 40, 0)
	v, s := l.look(a, 0)
	if left := int64(v) + l.ps.Remaining(s, 0); left != 100-1-3-42 {
		t.Fatalf("after 46 tokens at 0: %d left, want 54", left)
	}
}

// TestLostCASToARefund: a concurrent Refund lands between an admission's
// load of its cache word and its compare-and-swap (testHookPartial), so the
// CAS fails though the cache still holds enough usable tokens. The request
// must then be admitted from them, even while the cache's view of the
// shared bucket says it is dry and its next scan is not due.
func TestLostCASToARefund(t *testing.T) {
	l := mustNew(t, 1000, time.Second, 100, WithBatch(40), WithIdleAfter(time.Hour))
	a, b := cacheN(l, 0), cacheN(l, 1)
	// a borrows 41 from the full bucket at 0 and caches 40, whose slots
	// start at 1, 2, ..., 40ms. b takes the other 59 at 0 and the 20
	// refilled by 20ms: the bucket is empty at 20ms.
	l.allowN(a, 0, 1)
	if got := drain(l, b, 0) + drain(l, b, 20*ms); got != 79 {
		t.Fatalf("b took %d, want 59 + 20", got)
	}
	// At 5ms (stale) a wants 37: it holds 36 starting at or after 5ms,
	// borrows in vain (the bucket is empty until 20ms, which a now knows),
	// finds nothing idle, and keeps the 36. The 36 start at 5ms, before the
	// bucket could add the 1 missing (21ms): it waits until the bucket holds
	// all 37, at 57ms.
	want(t, "37 at 5ms", l.allowN(a, 5*ms, 37), false, 36, 20*ms+37*ms-5*ms)
	// 1 at 10.5ms: 30 of the 36 start at or after it; a keeps 29.
	r, rc := l.takeAt(a, 0, 10*ms+ms/2, 1)
	want(t, "1 at 10.5ms", r, true, 29, 0)
	fired := 0
	testHookPartial = func() {
		if fired++; fired == 1 {
			l.Refund(rc) // the word goes back to the 36
		}
	}
	defer func() { testHookPartial = nil }()
	// At 12.5ms the 28 starting at 13..40ms are usable, before and after
	// the refund: 28 are admitted.
	want(t, "28 at 12.5ms after a lost CAS", l.allowN(a, 12*ms+ms/2, 28), true, 0, 0)
	if fired == 0 {
		t.Fatal("the hook never ran: the test no longer reaches the lost CAS")
	}
}

// TestRecentScanStillBorrows: a cache that looked at the shared bucket and
// scanned for idle caches a moment ago still borrows when its view says
// the bucket holds what it lacks (the tokens it lacks, not more). At the
// offset -2.75ms the two looks straddle time 0.
func TestRecentScanStillBorrows(t *testing.T) {
	for _, x := range append([]int64{-2*ms - 3*ms/4}, offsets...) {
		l := mustNew(t, 1000, time.Second, 100, WithBatch(40), WithIdleAfter(time.Hour))
		a, b := cacheN(l, 0), cacheN(l, 1)
		l.allowN(a, x, 1) // a caches 40, slots starting at x+1..x+40ms
		if got := drain(l, b, x); got != 59 {
			t.Fatalf("offset %d: b took %d, want 59", x, got)
		}
		// 41 at x: a has 40, the bucket is empty: a borrows in vain (now
		// seeing the bucket empty at x) and scans (next scan x+30min). The
		// 40 start at or after x+1ms, when the bucket holds the 1 missing.
		want(t, "41 at x", l.allowN(a, x, 41), false, 40, ms)
		// 40 at x+5.5ms: 35 cached are usable, the bucket holds 5.5.
		want(t, "40 at x+5.5ms", l.allowN(a, x+5*ms+ms/2, 40), true, 0, 0)
	}
}

// takeoverScenario runs the idle-takeover timing: a caches 40 at x and goes
// idle; b and c empty the bucket; b's scans fall due at x+5ms, x+10ms (or,
// with late, x+13ms). idle is IdleAfter, 10ms: a is idle from x+10ms.
// wrapGen sets a's generation to 0, as after 2^31 refills.
func takeoverScenario(t *testing.T, x int64, late, wrapGen bool) {
	l := mustNew(t, 1000, time.Second, 100, WithBatch(40), WithIdleAfter(10*time.Millisecond))
	a, b, c := cacheN(l, 0), cacheN(l, 1), cacheN(l, 2)
	l.allowN(a, x, 1) // a caches 40, slots starting at x+1..x+40ms
	if wrapGen {
		a.w.Store(a.w.Load() &^ genMask)
	}
	// b takes the other 59; its last request, denied, scans (a is not idle
	// yet): next scan at x+5ms.
	if got := drain(l, b, x); got != 59 {
		t.Fatalf("b took %d at x, want 59", got)
	}
	d := 5 * ms
	if late {
		d = 8 * ms
	}
	// c takes what the bucket refilled by x+d; b, whose view says the bucket
	// holds d tokens, borrows 1 in vain (now seeing it empty at x+d), scans
	// (a is not idle before x+10ms): next scan at x+d+5ms.
	if got := drain(l, c, x+d); got != int(d/ms) {
		t.Fatalf("c took %d at x+%dms, want %d", got, d/ms, d/ms)
	}
	want(t, "b: 1 at x+d", l.allowN(b, x+d, 1), false, 0, ms)
	if late {
		// At x+11ms a is idle, but b's next scan is at x+13ms: its view
		// says the bucket holds 3, so 4 are denied from the cache alone.
		want(t, "b: 4 at x+11ms", l.allowN(b, x+11*ms, 4), false, 0, ms)
		// At x+13ms b scans and takes a's 28 starting at or after it.
		want(t, "b: 28 at x+13ms", l.allowN(b, x+13*ms, 28), true, 0, 0)
	} else {
		// At x+10ms, a idle for exactly IdleAfter and b's scan due exactly
		// then, b takes over a's 31 tokens starting at x+10..x+40ms.
		want(t, "b: 31 at x+10ms", l.allowN(b, x+10*ms, 31), true, 0, 0)
	}
	if l.takeovers.Load() != 1 || a.w.Load()>>tokShift != 0 {
		t.Fatalf("takeovers %d, a holds %d", l.takeovers.Load(), a.w.Load()>>tokShift)
	}
}

// TestTakeoverTiming: an idle cache is taken over exactly when it has been
// idle for IdleAfter and the denied cache's scan is due (at most one scan
// every IdleAfter/2), and with exactly the tokens the request needs; the
// same anywhere in int64 time, and whatever the generation of the cache
// taken over.
func TestTakeoverTiming(t *testing.T) {
	for _, x := range offsets {
		for _, late := range []bool{false, true} {
			takeoverScenario(t, x, late, false)
		}
	}
	takeoverScenario(t, 0, false, true)
}

// TestDryViewDoesNotRead: while the refill line a cache remembers says the
// shared bucket lacks what it needs, the cache denies from that line, not
// reading the shared cell (the Limiter doc): its RetryAfter is the line's.
// When the line says the bucket holds enough, it reads the bucket.
func TestDryViewDoesNotRead(t *testing.T) {
	l := mustNew(t, 1000, time.Second, 100, WithBatch(40), WithIdleAfter(time.Hour))
	b, c := cacheN(l, 0), cacheN(l, 1)
	if got := drain(l, b, 0); got != 100 {
		t.Fatalf("b took %d, want 100", got)
	}
	// c borrows in vain: it sees the bucket empty at 0, and scans.
	want(t, "c: 1 at 0", l.allowN(c, 0, 1), false, 0, ms)
	// b empties the bucket again at 10ms; c does not know.
	if got := drain(l, b, 10*ms); got != 10 {
		t.Fatalf("b took %d at 10ms, want 10", got)
	}
	// By c's line the bucket holds 12 at 12ms: 15 are denied from the line
	// (15 by 15ms), without a read.
	want(t, "c: 15 at 12ms", l.allowN(c, 12*ms, 15), false, 0, 3*ms)
	// 5 fit c's line: c reads the bucket (2 since 10ms) and is denied by it.
	want(t, "c: 5 at 12ms", l.allowN(c, 12*ms, 5), false, 0, 3*ms)
	want(t, "c: 15 at 12ms, after the read", l.allowN(c, 12*ms, 15), false, 0, 13*ms)
}

// TestRetryAfterWithCachedTokens: a denial with v tokens in the cache waits
// until the bucket holds n-v while those v are still usable, else until it
// holds n (the Limiter's retryAfter); here, with nothing else taken, the
// request is admitted exactly then, and denied 1ns before.
func TestRetryAfterWithCachedTokens(t *testing.T) {
	// A token per 100ms, burst 5, batch 2; IdleAfter 125ms by default.
	check := func(l *Limiter, c *cache, now, n int64, wantRetry int64) {
		t.Helper()
		r := l.allowN(c, now, n)
		if r.OK || r.RetryAfter != time.Duration(wantRetry) {
			t.Fatalf("%d at %dms: %+v, want a denial with RetryAfter %d", n, now/ms, r, wantRetry)
		}
		if l.allowN(c, now+wantRetry-1, n).OK {
			t.Fatalf("%d admitted 1ns before the RetryAfter", n)
		}
		if !l.allowN(c, now+wantRetry, n).OK {
			t.Fatalf("%d denied at the RetryAfter", n)
		}
	}
	// One cache: 1 (borrows 3, caches 2), 2 from the cache, 1 (borrows the
	// bucket's last 2, caches 1, whose slot starts at 400ms). At 0, 3 need
	// the bucket's 2 more, by 200ms, while the cached one is usable.
	l := mustNew(t, 10, time.Second, 5, WithBatch(2))
	c := cacheN(l, 0)
	l.allowN(c, 0, 1)
	l.allowN(c, 0, 2)
	want(t, "third take", l.allowN(c, 0, 1), true, 1, 0)
	check(l, c, 0, 3, 200*ms)

	// Two caches: c borrows 3 at 0 and caches 2 (slots starting at 100
	// and 200ms); d takes the bucket's other 2 at 0. At 150ms c holds 1
	// usable, starting at 200ms, and learns the bucket is empty at 0.
	for _, x := range []struct {
		n, retry int64
	}{
		// 3: the bucket holds 2 by 200ms, when c's token starts: usable.
		{3, 50 * ms},
		// 4: the bucket holds 3 by 300ms, after c's token started; it
		// holds 4 by 400ms.
		{4, 250 * ms},
	} {
		l := mustNew(t, 10, time.Second, 5, WithBatch(2))
		c, d := cacheN(l, 0), cacheN(l, 1)
		l.allowN(c, 0, 1)
		want(t, "d: 2 at 0", l.allowN(d, 0, 2), true, 0, 0)
		check(l, c, 150*ms, x.n, x.retry)
	}
}

// TestTokenStartingNow: at 3 tokens a ns, a cached token whose slot starts
// exactly at now (inside a ns: the loan ends at 33⅓ns) is usable.
func TestTokenStartingNow(t *testing.T) {
	l := mustNew(t, 3, time.Nanosecond, 100, WithBatch(99), WithIdleAfter(time.Hour))
	a, b := cacheN(l, 0), cacheN(l, 1)
	// a borrows the whole burst at 0: 99 cached, the last slot (33, 33⅓].
	l.allowN(a, 0, 1)
	// b takes the 99 the bucket refilled by 33ns.
	if r := l.allowN(b, 33, 99); !r.OK {
		t.Fatalf("b: 99 at 33ns: %+v", r)
	}
	want(t, "a: 1 at 33ns", l.allowN(a, 33, 1), true, 0, 0)
}

// TestStaleRequestKeepsCache: a request at a now so far before a cache's
// slots that none is usable yet, even near the other end of int64 time,
// leaves them cached for later.
func TestStaleRequestKeepsCache(t *testing.T) {
	// 3 tokens a ns, burst 101: a borrows the whole burst at t0, its loan
	// ending at t0 + 33⅔ns (33ns and 2 units of 3). The stale now puts
	// (end - now)*3 in units at just under 2^65, where the low word and
	// the remainder carry.
	const t0 = int64(3_100_000_000_000_000_000)
	l := mustNew(t, 3, time.Nanosecond, 101, WithBatch(100), WithIdleAfter(time.Hour))
	a := cacheN(l, 0)
	l.allowN(a, t0, 1)
	z := a.end()
	d := new(big.Int).Lsh(big.NewInt(1), 65)
	d.Sub(d, big.NewInt(int64(z.rem))).Quo(d, big.NewInt(3)) // (2^65 - rem)/3, rounded down
	stale := new(big.Int).Sub(big.NewInt(z.ns), d)
	if z.rem != 2 || !stale.IsInt64() {
		t.Fatalf("setup: loan end %+v, stale now %v", z, stale)
	}
	if r := l.allowN(a, stale.Int64(), 1); r.OK {
		t.Fatalf("admitted at %v, before every slot", stale)
	}
	want(t, "a: 1 at t0", l.allowN(a, t0, 1), true, 99, 0)
}

// TestClosedCacheNotTakenOver: while a cache is being refilled (closed),
// another cache's takeover must not take its tokens: the refill goes on
// with them. The takeover is run from testHookPartial, inside the refill.
func TestClosedCacheNotTakenOver(t *testing.T) {
	l := mustNew(t, 1000, time.Second, 100, WithBatch(40), WithIdleAfter(time.Microsecond))
	a, b, d := cacheN(l, 0), cacheN(l, 1), cacheN(l, 2)
	var adm []admission
	ask := func(c *cache, now, n int64) limit.Result {
		r := l.allowN(c, now, n)
		if r.OK {
			adm = append(adm, admission{now, n})
		}
		return r
	}
	ask(a, 0, 1) // a caches 40, slots starting at 1..40ms
	for ask(b, 0, 1).OK {
	}
	const now = ms + ms/2
	var during limit.Result
	fired := false
	testHookPartial = func() {
		if a.mu.TryLock() {
			a.mu.Unlock() // not inside a's refill yet
			return
		}
		if !fired {
			fired = true
			// d, new, finds the bucket empty (1 token at 1.5ms) and scans:
			// a is idle, but closed.
			during = ask(d, now, 30)
		}
	}
	defer func() { testHookPartial = nil }()
	// a wants 40 at 1.5ms: 39 usable, so it refills, borrowing the 1.
	want(t, "a: 40 at 1.5ms", ask(a, now, 40), true, 0, 0)
	if !fired {
		t.Fatal("the hook never ran inside a's refill")
	}
	if during.OK {
		t.Errorf("d took over a's tokens while a was refilling: %+v", during)
	}
	if err := checkBound(l, adm); err != nil {
		t.Fatal(err)
	}
}

// TestRefundNeverLowers: a refund gives back at most what a cache word
// holds; it never leaves the cache with fewer tokens than before it.
func TestRefundNeverLowers(t *testing.T) {
	l := mustNew(t, 1e9, time.Second, 1<<40, WithBatch(maxBatch))
	a := cacheN(l, 0)
	// Borrows n + a batch: the cache holds the batch, the most it can.
	const n = 1<<31 + 10
	r, rc := l.takeAt(a, 0, 0, n)
	want(t, "take", r, true, maxBatch, 0)
	l.Refund(rc)
	if k := a.w.Load() >> tokShift; k != maxBatch {
		t.Fatalf("after the refund the cache holds %d, want %d", k, maxBatch)
	}
}
