package redis

import (
	"math/big"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// TestServerTime decides at the server's clock: a burst, a denial whose
// RetryAfter is right, an admission after waiting it. Both limiters give
// back 10 units a second; the units that may have come back while the
// burst was asked are bounded by the time the calls were seen to take, so
// a slow machine widens the check only by what it measured.
func TestServerTime(t *testing.T) {
	t.Parallel() // sleeps; keys in a database of its own
	_, c := server(t)
	for _, mk := range []func() (*Limiter, error){
		func() (*Limiter, error) { return NewGCRA(c, "g", 10, time.Second, 5) },
		func() (*Limiter, error) { return NewWindow(c, "w", 5, 500*time.Millisecond) },
	} {
		l, err := mk()
		if err != nil {
			t.Fatal(err)
		}
		r := burstThenDeny(t, l, 5, 100*time.Millisecond)
		if r.RetryAfter <= 0 || r.RetryAfter > time.Second {
			t.Fatalf("%s: denial: %+v", l.prefix, r)
		}
		time.Sleep(time.Duration(r.RetryAfter) + 2*time.Millisecond)
		if ok, err := l.Allow(bg, "k"); err != nil || !ok {
			t.Fatalf("%s: after RetryAfter %v: %v %v", l.prefix, time.Duration(r.RetryAfter), ok, err)
		}
	}
}

// burstThenDeny asks l for one unit at a time on a fresh key of the given
// burst, refilled one unit per every, until it denies, and returns the
// denial. Each admission's Remaining is the burst less those asked, plus at
// most the units that came back since the first call began (one per every,
// rounded up); the denial comes once those are spent.
func burstThenDeny(t *testing.T, l *Limiter, burst int64, every time.Duration) result {
	t.Helper()
	start := time.Now()
	for i := int64(0); i < 100; i++ {
		r, err := l.AllowN(bg, "k", 1)
		back := int64((time.Since(start) + every - 1) / every)
		if err != nil {
			t.Fatalf("%s: call %d: %v", l.prefix, i, err)
		}
		if !r.OK {
			if i < burst {
				t.Fatalf("%s: call %d denied within the burst: %+v", l.prefix, i, r)
			}
			return r
		}
		if lo, hi := max(0, burst-1-i), min(burst-1, burst-1-i+back); i >= burst+back || r.Remaining < lo || r.Remaining > hi {
			t.Fatalf("%s: admission %d after %v: %+v, want Remaining in [%d, %d] and at most %d admissions",
				l.prefix, i, time.Since(start), r, lo, hi, burst+back)
		}
	}
	t.Fatalf("%s: 100 admissions, never denied", l.prefix)
	return result{}
}

// stateAndExpiry reads key's doubles and its expiry time in one
// transaction; for a key that has left it returns nil, failing t if it
// left sooner than soonest after start.
func stateAndExpiry(t *testing.T, c *goredis.Client, key string, n int, start time.Time, soonest time.Duration) ([]float64, time.Duration) {
	t.Helper()
	var get *goredis.StringCmd
	var exp *goredis.DurationCmd
	if _, err := c.TxPipelined(bg, func(p goredis.Pipeliner) error {
		get = p.Get(bg, key)
		exp = p.PExpireTime(bg, key)
		return nil
	}); err == goredis.Nil {
		if el := time.Since(start); el < soonest {
			t.Fatalf("key %s left %v after an admission, before its limiter could be full", key, el)
		}
		return nil, 0
	} else if err != nil {
		t.Fatal(err)
	}
	b, _ := get.Bytes()
	return decodeState(t, key, b, n), exp.Val()
}

// TestKeysLeaveWhenFull checks each key's expiry is exactly when its state
// becomes the same as no key (plus the grace), and that it is then gone.
func TestKeysLeaveWhenFull(t *testing.T) {
	t.Parallel() // sleeps; keys in a database of its own
	_, c := server(t)
	for _, grace := range []time.Duration{0, 1500 * time.Microsecond, time.Second} {
		t.Run(grace.String(), func(t *testing.T) {
			t.Parallel() // each sleeps a second
			g, _ := NewGCRA(c, "g"+grace.String(), 3, time.Second, 2, WithGrace(grace))
			w, _ := NewWindow(c, "w"+grace.String(), 4, 100*time.Millisecond, WithGrace(grace))
			gms := int64((grace + time.Millisecond - 1) / time.Millisecond)
			for i := range 3 {
				start := time.Now()
				if _, err := g.AllowN(bg, "k", 1); err != nil {
					t.Fatal(err)
				}
				if _, err := w.AllowN(bg, "k", 1); err != nil {
					t.Fatal(err)
				}
				// GCRA: full at origin + ceil(t*p/e) ns. A loaded machine
				// may read a key after it left: right only if its limiter
				// can be full by then (a third of a second after an
				// admission; the window's, two windows after the start
				// of the one that admitted).
				st, gexp := stateAndExpiry(t, c, g.keyOf("k"), 8, start, 300*time.Millisecond)
				ws, wexp := stateAndExpiry(t, c, w.keyOf("k"), 4, start, 100*time.Millisecond)
				if st == nil || ws == nil {
					continue
				}
				gp := g.prog.Load().gp
				full := new(big.Int).Mul(big.NewInt(int64(st[2])), new(big.Int).SetUint64(gp.p))
				full.Add(full, new(big.Int).SetUint64(gp.e-1)).Quo(full, new(big.Int).SetUint64(gp.e))
				ns := int64(st[0])*1e9 + int64(st[1]) + full.Int64()
				if got, want := gexp, time.Duration((ns+999999)/1e6+gms)*time.Millisecond; got != want {
					t.Fatalf("gcra grace %v step %d: expires at %v, want %v", grace, i, got, want)
				}
				ns = int64(ws[0])*1e9 + int64(ws[1]) + 2*int64(100*time.Millisecond)
				if got, want := wexp, time.Duration((ns+999999)/1e6+gms)*time.Millisecond; got != want {
					t.Fatalf("window grace %v step %d: expires at %v, want %v", grace, i, got, want)
				}
			}
			if grace > 100*time.Millisecond {
				return
			}
			time.Sleep(time.Second + grace + 10*time.Millisecond)
			if n := c.Exists(bg, g.keyOf("k"), w.keyOf("k")).Val(); n != 0 {
				t.Fatalf("grace %v: %d keys left after they were full", grace, n)
			}
			// No key is a full limiter.
			if r, err := g.AllowN(bg, "k", 2); err != nil || !r.OK {
				t.Fatalf("no key: %+v %v", r, err)
			}
		})
	}
}

// TestReset removes a key's state.
func TestReset(t *testing.T) {
	_, c := server(t)
	l, _ := NewGCRA(c, "r", 1, time.Hour, 1)
	l.AllowN(bg, "k", 1)
	if r, _ := l.AllowN(bg, "k", 1); r.OK {
		t.Fatal("admitted past the burst")
	}
	if err := l.Reset(bg, "k"); err != nil {
		t.Fatal(err)
	}
	if r, err := l.AllowN(bg, "k", 1); err != nil || !r.OK {
		t.Fatalf("after Reset: %+v %v", r, err)
	}
}

// TestCostErrors returns package limit's errors without a round trip.
func TestCostErrors(t *testing.T) {
	l, err := NewGCRA(offline, "x", 1, time.Second, 3)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := l.AllowN(bg, "k", -1); err != errNegativeCost || r.RetryAfter != never {
		t.Fatalf("n=-1: %+v %v", r, err)
	}
	if r, err := l.AllowN(bg, "k", 4); err != errCostExceedsBurst || r.RetryAfter != never {
		t.Fatalf("n=4: %+v %v", r, err)
	}
	if _, err := l.allowNAt(bg, "k", 1<<62, 1); err != errTime {
		t.Fatalf("now 2^62: %v", err)
	}
}

// TestAllocs guards the allocations per decision: a Limiter's round trip
// (go-redis's command, reply and key; redis_rate v10 makes 20) and the
// TwoTier's local admissions and cached denials (none).
func TestAllocs(t *testing.T) {
	_, c := server(t)
	g, _ := NewGCRA(c, "a", 1e8, time.Second, 1<<17)
	if n := testing.AllocsPerRun(500, func() { g.AllowN(bg, "k", 1) }); n > 13 {
		t.Errorf("Limiter.AllowN: %v allocations", n)
	}
	tt, _ := NewTwoTier(c, "at", 1000, time.Second, 1<<20, WithBatch(1<<19), WithLease(time.Second))
	tt.Allow(bg, "k")
	if n := testing.AllocsPerRun(10000, func() { tt.Allow(bg, "k") }); n != 0 {
		t.Errorf("TwoTier.Allow admitting locally: %v allocations", n)
	}
	d, _ := NewTwoTier(c, "ad", 1, time.Hour, 2, WithBatch(1), WithLease(time.Millisecond))
	d.Allow(bg, "k")
	d.Allow(bg, "k")
	d.Allow(bg, "k") // denied by Redis: cached for about an hour
	if n := testing.AllocsPerRun(1000, func() { d.Allow(bg, "k") }); n != 0 {
		t.Errorf("TwoTier.Allow denying from its cache: %v allocations", n)
	}
	if st := d.Stats(); st.RoundTrips > 3 {
		t.Errorf("cached denials made round trips: %+v", st)
	}
}
