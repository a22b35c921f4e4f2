package keyed

import (
	"fmt"
	"math"
	"math/rand/v2"
	"net/netip"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cellrate/cellrate/internal/bound"
	"github.com/cellrate/cellrate/internal/race"
	"github.com/cellrate/cellrate/limit"
)

// aimed returns n keys whose groups meet key's and whose sketch registers
// are none of key's: those an attacker who knew the table's seeds would
// choose to take key's slot without raising what key finds when it comes
// back.
func aimed(tb *Table, key string, n int) []string {
	h := tb.strHash(key)
	g1 := tb.group(h)
	g2 := tb.group2(h, g1)
	ri, rj := tb.sk.regs(tb.tag(key))
	var out []string
	for x := 0; len(out) < n; x++ {
		k := fmt.Sprint("aim", x)
		kh := tb.strHash(k)
		a := tb.group(kh)
		b := tb.group2(kh, a)
		i, j := tb.sk.regs(tb.tag(k))
		if (a == g1 || a == g2 || b == g1 || b == g2) && i != ri && i != rj && j != ri && j != rj {
			out = append(out, k)
		}
	}
	return out
}

// TestAdaptiveSelfEviction: an attacker that knows the table's seeds asks
// for its key A as fast as it can and, each time A is denied, throws keys
// aimed at A's groups (and away from its sketch registers) at the table
// until A has lost its slot, then asks again: a key that loses its slot
// comes back owing what it owed, so A stays within its own limiter's exact
// bound. (Buckets lose A's slot at most denials; windows, whose debts end
// at window edges, tie and lose it less.)
func TestAdaptiveSelfEviction(t *testing.T) {
	runs := uint64(12)
	if testing.Short() || race.Enabled {
		runs = 3
	}
	kinds(t, func(t *testing.T, mk func(...Option) *Table) {
		for _, policy := range []policy{evict, refuse} {
			for seed := range runs {
				r := rand.New(rand.NewPCG(seed, 11))
				tb := mk(WithCapacity(4*(1+r.IntN(3))), withPolicy(policy))
				pool := aimed(tb, "A", 512)
				var uses []bound.Use
				now := int64(1<<40) + r.Int64N(1<<30)
				evictions := 0
				for range 400 {
					now += r.Int64N(tok)
					n := 1 + r.Int64N(tb.burst())
					if res, err := tb.AllowNAt("A", now, n); res.OK && err == nil {
						uses = append(uses, bound.Use{At: now, Cost: n})
						continue
					}
					if evictOwn(tb, r, pool, now) {
						evictions++
					}
				}
				if policy == evict && !tb.k.window && evictions == 0 { // WithRefuse takes no slot whose key owes
					t.Fatalf("seed %d: A never lost its slot", seed)
				}
				checkBound(t, tb, map[string][]bound.Use{"A": uses})
			}
		}
	})
}

// evictOwn throws aimed keys at the table until A holds no slot (or 64
// tries), and reports whether it lost it.
func evictOwn(tb *Table, r *rand.Rand, pool []string, now int64) bool {
	for range 64 {
		if _, _, held := tb.find("A"); !held {
			return true
		}
		k := pool[r.IntN(len(pool))]
		// One unit behind A's time (owing less than A, so that A's slot
		// goes first) or a little ahead of it, a whole burst, or a
		// refunded take (a key that took a slot and owes nothing).
		switch r.IntN(4) {
		case 0:
			tb.AllowAt(k, now-r.Int64N(4*tok))
		case 1:
			tb.AllowAt(k, now+r.Int64N(2*tok))
		case 2:
			tb.AllowNAt(k, now-r.Int64N(1000*tok), tb.burst())
		default:
			if res, rc, err := tb.TakeAt(k, now, 1+r.Int64N(tb.burst())); res.OK && err == nil {
				tb.Refund(rc)
			}
		}
	}
	_, _, held := tb.find("A")
	return !held
}

// TestFloodDelayIsABurstEachTime: under a flood of one-unit keys 20 times
// the table each token time, a key asking once a token time loses its slot
// between requests and is denied nearly always (the documented price), but
// each denial's wait is at most a burst past the flood's time, and never
// an admission beyond its own bound.
func TestFloodDelayIsABurstEachTime(t *testing.T) {
	kinds(t, func(t *testing.T, mk func(...Option) *Table) {
		tb := mk(WithCapacity(64))
		step := tok
		most := time.Duration(tb.burst() * tok)
		if tb.k.window {
			step, most = int64(tWindow)/tLimit, 2*tWindow+time.Duration(1)<<tb.k.shift
		}
		now := int64(1 << 40)
		denied, flood := 0, 0
		var uses []bound.Use
		for range 100 {
			now += step
			for range 20 * 64 {
				tb.AllowUint64At(uint64(flood), now)
				flood++
			}
			r, err := tb.AllowNAt("good", now, 1)
			switch {
			case err != nil:
				t.Fatal(err)
			case r.OK:
				uses = append(uses, bound.Use{At: now, Cost: 1})
			case r.RetryAfter > most:
				t.Fatalf("denied for %v, more than %v", r.RetryAfter, most)
			default:
				denied++
			}
		}
		t.Logf("denied %d of 100", denied)
		if denied < 50 {
			t.Errorf("denied %d of 100: the flood no longer delays (update the package doc)", denied)
		}
		checkBound(t, tb, map[string][]bound.Use{"good": uses})
	})
}

// TestConcurrentRefundUnderFlood: goroutines take units for a few hot keys
// and refund half of the takes at once or after other decisions, while
// floods of whole-burst keys take their slots (so a Receipt's slot may
// have gone to another key, or back to the same one) in a table of 8
// slots: the units kept (taken and not refunded) of each key stay within
// its exact bound, whether each refund gave back or, its slot changed,
// gave nothing.
func TestConcurrentRefundUnderFlood(t *testing.T) {
	ops := 6000
	switch {
	case race.Enabled:
		ops = 800
	case testing.Short():
		ops = 1500
	}
	tb := newBucketTable(t, WithCapacity(8))
	var (
		mu   sync.Mutex
		kept = map[string][]bound.Use{}
		wg   sync.WaitGroup
	)
	const base = int64(1 << 40)
	for g := range 6 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 13))
			mine := map[string][]bound.Use{}
			var held []limit.Receipt
			for i := range ops {
				now := base + int64(i)*int64(10*time.Microsecond) - r.Int64N(int64(time.Millisecond))
				if r.IntN(3) == 0 {
					tb.AllowNAt(fmt.Sprint("flood", g, "-", i), now, tb.burst())
					continue
				}
				key, n := fmt.Sprint("hot", r.IntN(3)), 1+r.Int64N(2)
				res, rc, err := tb.TakeAt(key, now, n)
				switch {
				case err != nil || !res.OK:
				case r.IntN(2) == 0:
					mine[key] = append(mine[key], bound.Use{At: now, Cost: n})
				case r.IntN(2) == 0:
					tb.Refund(rc)
				default:
					held = append(held, rc)
				}
				if len(held) > 0 && r.IntN(4) == 0 { // refund later, latest first
					tb.Refund(held[len(held)-1])
					held = held[:len(held)-1]
				}
			}
			for _, rc := range held {
				tb.Refund(rc)
			}
			mu.Lock()
			for k, u := range mine {
				kept[k] = append(kept[k], u...)
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	checkBound(t, tb, kept)
}

// TestEmbeddedIPv4: an IPv6 address that carries an IPv4 one by a
// standard translation is that IPv4 client: a 6to4 host (2002::/16) owns
// a /48, 65,536 /64s, which would otherwise be as many clients for the
// price of one IPv4 address; a Teredo client (2001::/32) picks random flag
// bits in its /64, and all clients of a server would otherwise share the
// rest of it; behind NAT64's well-known prefix (64:ff9b::/96) every IPv4
// client would otherwise share one /64.
func TestEmbeddedIPv4(t *testing.T) {
	const now = int64(1e12)
	for _, c := range []struct {
		a, same, other string
	}{
		{"2002:c000:201:1::1", "2002:c000:201:ffff::2", "2002:c000:202:1::1"},
		{"2002:c000:201::", "192.0.2.1", "192.0.2.2"},
		{"64:ff9b::192.0.2.1", "192.0.2.1", "64:ff9b::192.0.2.2"},
		{"64:ff9b::192.0.2.1", "::ffff:192.0.2.1", "64:ff9b:0:0:1::c000:201"}, // outside the /96: an IPv6 client
		// Teredo: server 65.54.227.120, random flag bits, client
		// 192.0.2.1 inverted (3fff:fdfe); another client of that server.
		{"2001:0:4136:e378:8000:63bf:3fff:fdfe", "2001:0:4136:e378:8123:1:3fff:fdfe", "2001:0:4136:e378:8000:63bf:3fff:fdfd"},
		{"2001:0:4136:e378:8000:63bf:3fff:fdfe", "192.0.2.1", "2001:1::1"}, // 2001:1::/32 is not Teredo
	} {
		tb, err := New(1, time.Hour, 1)
		if err != nil {
			t.Fatal(err)
		}
		if !tb.AllowAddrAt(netip.MustParseAddr(c.a), now) {
			t.Fatalf("%s denied at first", c.a)
		}
		if tb.AllowAddrAt(netip.MustParseAddr(c.same), now) {
			t.Errorf("%s admitted after %s: not one client", c.same, c.a)
		}
		if !tb.AllowAddrAt(netip.MustParseAddr(c.other), now) {
			t.Errorf("%s denied after %s: not another client", c.other, c.a)
		}
	}
}

// TestKeyShapes: a key of a MiB and the empty key are keys like any other
// (the empty string and a nil []byte are one key), and deciding on them,
// or on a stream of distinct keys far beyond the capacity in a table that
// has decided nothing yet, allocates nothing: the table's memory is all
// taken at New.
func TestKeyShapes(t *testing.T) {
	tb := newBucketTable(t, WithCapacity(64))
	const now = int64(1 << 40)
	huge := make([]byte, 1<<20)
	huge2 := slices.Clone(huge)
	huge2[len(huge2)-1] = 1
	for _, k := range [][]byte{huge, huge2, nil} {
		for range tBurst {
			if !tb.AllowBytesAt(k, now) {
				t.Fatalf("a key of %d bytes denied within its burst", len(k))
			}
		}
	}
	if tb.AllowAt(string(huge), now) || tb.AllowAt("", now) {
		t.Fatal("a string key is not its bytes' key")
	}
	if race.Enabled {
		return // the race detector allocates
	}
	if a := testing.AllocsPerRun(20, func() { tb.AllowBytesAt(huge, now); tb.AllowAt("", now) }); a != 0 {
		t.Fatalf("%v allocations deciding a huge and an empty key", a)
	}
	n := 1 << 20
	if testing.Short() {
		n = 1 << 16
	}
	i := 0
	a := testing.AllocsPerRun(16, func() { // a stray allocation elsewhere in the process averages to 0
		for range n / 16 {
			tb.AllowUint64At(uint64(i), now+int64(i))
			i++
		}
	})
	if a != 0 {
		t.Fatalf("%d distinct keys: %v allocations a %d", n, a, n/16)
	}
}

// TestNoAllocationAfterNew: the first reuse, eviction and refusal of a new
// table allocate nothing (its counters' cells are made by New). Each try
// counts every allocation in the process, so the least of three fresh
// tables is taken; a lazy cell allocates in all three.
func TestNoAllocationAfterNew(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector allocates")
	}
	const now = int64(1 << 40)
	least := uint64(math.MaxUint64)
	for range 3 {
		ev := newBucketTable(t, WithCapacity(4))
		rf := newBucketTable(t, WithCapacity(4), WithRefuse())
		for i := range 4 {
			ev.AllowNAt(fmt.Sprint(i), now, tBurst)
			rf.AllowNAt(fmt.Sprint(i), now, tBurst)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		ev.AllowAt("evicts", now)                  // a busy slot taken
		ev.AllowAt("reuses", now+int64(time.Hour)) // an idle one
		rf.AllowAt("refused", now)
		runtime.ReadMemStats(&after)
		if s := ev.Stats(); s.Evictions == 0 || ev.reuses.Load() == 0 || rf.Stats().Refusals == 0 {
			t.Fatalf("%+v %+v: not the first eviction, reuse and refusal", s, rf.Stats())
		}
		least = min(least, after.Mallocs-before.Mallocs)
	}
	if least != 0 {
		t.Fatalf("%d allocations", least)
	}
}
