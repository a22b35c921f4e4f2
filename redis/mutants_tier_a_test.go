package redis

import (
	"context"
	"testing"
	"time"
)

// poolWord is a pool word of units in a lease ending at ms (monotonic).
func poolWord(ms, units uint64) uint64 { return ms<<tokBits | units }

// TestSpendLive: spending from a pool in a live lease takes the units with
// one compare-and-swap, keeps the lease's end, and reports what is left.
func TestSpendLive(t *testing.T) {
	far := uint64(monotonic()/1e6 + 60_000) // a minute ahead
	var e entry
	e.word.Store(poolWord(far, 10))
	before := monotonic()
	r, at, ok := e.spend(3)
	if !ok || !r.OK || r.Remaining != 7 || r.RetryAfter != 0 || at < before {
		t.Fatalf("spend 3 of 10: %+v at %d %v, want admitted with 7 left at or after %d", r, at, ok, before)
	}
	if w := e.word.Load(); w != poolWord(far, 7) {
		t.Fatalf("word %#x, want %#x", w, poolWord(far, 7))
	}
	// More than the pool holds: nothing taken.
	if r, _, ok := e.spend(8); ok || r.OK || e.word.Load() != poolWord(far, 7) {
		t.Fatalf("spend 8 of 7: %+v %v, word %#x", r, ok, e.word.Load())
	}
	// A lease that has ended: nothing admitted, the units left in the pool
	// (void) for the next borrow to give back.
	e.word.Store(poolWord(1, 10))
	if r, _, ok := e.spend(3); ok || r.OK || e.word.Load() != poolWord(1, 10) {
		t.Fatalf("spend from an ended lease: %+v %v, word %#x", r, ok, e.word.Load())
	}
}

// TestAddPool: add keeps the earlier end for all the units when the pool's
// lease is live and holds units, and otherwise replaces the pool: an empty
// pool's end and a dead lease's void units are dropped, so no unit is
// spent after its own lease. Units past what the word holds are dropped:
// a carry out of the units would move the lease's end a ms later.
func TestAddPool(t *testing.T) {
	now := monotonic()
	ms := uint64(now / 1e6)
	// A minute and two ahead; near even, so that a carry into it shows.
	near, far := (ms+60_000)&^1, ms+120_000
	const m = 4
	for _, tc := range []struct {
		name     string
		word     uint64
		deadline int64 // ns
		want     uint64
	}{
		{"live units, later lease", poolWord(near, 5), int64(far)*1e6 + 999_999, poolWord(near, 5+m)},
		{"live units, earlier lease", poolWord(far, 5), int64(near)*1e6 + 999_999, poolWord(near, 5+m)},
		{"empty pool, live end", poolWord(near, 0), int64(far) * 1e6, poolWord(far, m)},
		{"void units", poolWord(ms-1, 5), int64(far) * 1e6, poolWord(far, m)},
		{"void units, ms 0", poolWord(0, 5), int64(near) * 1e6, poolWord(near, m)},
		{"new pool", 0, int64(near) * 1e6, poolWord(near, m)},
		{"full pool", poolWord(near, tokMask-1), int64(far) * 1e6, poolWord(near, tokMask)},
	} {
		var e entry
		e.word.Store(tc.word)
		e.add(m, tc.deadline)
		if w := e.word.Load(); w != tc.want {
			t.Errorf("%s: add %d to %#x: %#x (%d ms, %d units), want %#x", tc.name, m, tc.word,
				w, w>>tokBits, w&tokMask, tc.want)
		}
	}
}

// testTier is a TwoTier of 1 event per second, burst 100 (lease 1s, Redis
// burst 99), on a client it never asks.
func testTier(t *testing.T) (*TwoTier, *tierRate) {
	tt, err := NewTwoTier(offline, "ta", 1, time.Second, 100)
	if err != nil {
		t.Fatal(err)
	}
	rt := tt.rate.Load()
	if rt.lease != int64(time.Second) || tt.redisBurst() != 99 {
		t.Fatalf("lease %d, Redis burst %d", rt.lease, tt.redisBurst())
	}
	return tt, rt
}

// TestReceivedShort: a borrow that brought fewer units than the request
// puts them in the pool and denies, reporting them and the rate's wait for
// the rest.
func TestReceivedShort(t *testing.T) {
	tt, rt := testTier(t)
	e := new(entry)
	r, at, err := tt.received(e, rt, result{}, 2, 5, monotonic())
	if err != nil || r.OK || at != 0 || r.Remaining != 2 || r.RetryAfter != 3*time.Second {
		t.Fatalf("2 units for a request of 5: %+v at %d %v, want a denial with 2 left and a wait of 3s", r, at, err)
	}
	if tok := e.word.Load() & tokMask; tok != 2 {
		t.Fatalf("pool %d, want 2", tok)
	}
	// Enough: admitted from the pool.
	r, _, err = tt.received(e, rt, result{}, 3, 4, monotonic())
	if err != nil || !r.OK || r.Remaining != 1 {
		t.Fatalf("3 more for a request of 4: %+v %v, want admitted with 1 left", r, err)
	}
}

// TestReceivedZerosHalve: each borrow that brings units halves the count of
// borrows that found none, and the next that finds none waits the rate's
// refill of that count (one more, less one) past Redis's wait.
func TestReceivedZerosHalve(t *testing.T) {
	tt, rt := testTier(t)
	e := new(entry)
	e.zeros = 6
	if _, _, err := tt.received(e, rt, result{}, 2, 1, monotonic()); err != nil {
		t.Fatal(err)
	}
	if e.zeros != 3 {
		t.Fatalf("zeros %d after a borrow with units, want 3", e.zeros)
	}
	now := monotonic()
	r, _, err := tt.received(e, rt, result{RetryAfter: time.Millisecond}, 0, 1, now)
	want := time.Millisecond + 3*time.Second
	if err != nil || r.OK || r.RetryAfter != want || e.zeros != 4 {
		t.Fatalf("a borrow with none: %+v %v, zeros %d, want a wait of %v and zeros 4", r, err, e.zeros, want)
	}
	if d := e.denyUntil.Load(); d < now+int64(want) {
		t.Fatalf("denied until %d, want at least %d", d, now+int64(want))
	}
}

// TestBorrowKeepsLast: the units of a borrow are given back at most once,
// and only by the process's next borrow after it: a borrow that found none
// keeps them to give back (it admitted nothing), one that gave back or
// failed forgets them (given back, or lost).
func TestBorrowKeepsLast(t *testing.T) {
	_, c := server(t)
	tt, err := NewTwoTier(c, "bk", 1, 10*time.Minute, 100, WithBatch(40), WithTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	rt := tt.rate.Load()
	rb := tt.redisBurst()
	e := new(entry)
	e.mu.Lock()
	defer e.mu.Unlock()
	// The bucket, then a line of reservations two Redis bursts long.
	if _, m, err := tt.borrow(bg, e, "k", rt, rb, rb, 0); err != nil || m != rb {
		t.Fatalf("first borrow: %d %v, want %d", m, err, rb)
	}
	if r, m, err := tt.borrow(bg, e, "k", rt, 1, rb, 0); err != nil || m != rb || r.RetryAfter <= 0 {
		t.Fatalf("reservation: %+v %d %v, want %d reserved", r, m, err, rb)
	}
	if e.lastM != rb {
		t.Fatalf("lastM %d after a reservation of %d", e.lastM, rb)
	}
	// A dead pool of 3 units the reservation left.
	dead := poolWord(1, 3)
	e.word.Store(dead)
	if _, m, err := tt.borrow(bg, e, "k", rt, 1, rb, 0); err != nil || m != 0 {
		t.Fatalf("a borrow behind a full line: %d %v, want none", m, err)
	}
	if e.lastM != rb {
		t.Fatalf("lastM %d after a borrow that found none, want %d (still to give back)", e.lastM, rb)
	}
	if give := e.reclaim(monotonic()); give != 3 {
		t.Fatalf("reclaimed %d of a dead pool of 3, want 3", give)
	}
	// A borrow that gives back and finds none (the give-back refused: not
	// the value it wrote): its units are gone all the same.
	e.lastM, e.last = 5, "not written"
	if _, m, err := tt.borrow(bg, e, "k", rt, 1, rb, 5); err != nil || m != 0 {
		t.Fatalf("a borrow giving back behind a full line: %d %v, want none", m, err)
	}
	if e.lastM != 0 {
		t.Fatalf("lastM %d after giving back, want 0", e.lastM)
	}
	// A borrow that fails, giving nothing back: its units are lost.
	ctx, cancel := context.WithCancel(bg)
	cancel()
	e.lastM = 5
	e.word.Store(dead)
	if _, _, err := tt.borrow(ctx, e, "k", rt, 1, rb, 0); err == nil {
		t.Fatal("a borrow with a cancelled context succeeded")
	}
	if give := e.reclaim(monotonic()); give != 0 || e.lastM != 0 {
		t.Fatalf("after a failed borrow: reclaimed %d, lastM %d, want none", give, e.lastM)
	}
}
