package keyed

import (
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"math/rand/v2"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/cellrate/cellrate/internal/bound"
	"github.com/cellrate/cellrate/internal/race"
	"github.com/cellrate/cellrate/limit"
)

// Test parameters: a bucket of 10 tokens per ms, burst 5 (a token takes
// 100µs), and a window of 5 units per 500µs.
const (
	tEvents = 10
	tPeriod = time.Millisecond
	tBurst  = 5
	tLimit  = 5
	tWindow = 500 * time.Microsecond
)

func newBucketTable(t testing.TB, opts ...Option) *Table {
	t.Helper()
	tb, err := New(tEvents, tPeriod, tBurst, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func newWindowTable(t testing.TB, opts ...Option) *Table {
	t.Helper()
	tb, err := NewWindow(tLimit, tWindow, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// kinds runs f on a bucket table and on a window table.
func kinds(t *testing.T, f func(t *testing.T, mk func(opts ...Option) *Table)) {
	t.Run("bucket", func(t *testing.T) { f(t, func(o ...Option) *Table { return newBucketTable(t, o...) }) })
	t.Run("window", func(t *testing.T) { f(t, func(o ...Option) *Table { return newWindowTable(t, o...) }) })
}

func TestParamErrors(t *testing.T) {
	cases := []struct {
		param string
		make  func() (*Table, error)
	}{
		{"period", func() (*Table, error) { return New(1, 0, 1) }},
		{"events", func() (*Table, error) { return New(0, time.Second, 1) }},
		{"events", func() (*Table, error) { return New(5, time.Microsecond, 1) }},
		{"burst", func() (*Table, error) { return New(1, time.Second, 0) }},
		{"burst", func() (*Table, error) { return New(1, time.Second, maxBurst+1) }},
		{"limit", func() (*Table, error) { return NewWindow(0, time.Second) }},
		{"limit", func() (*Table, error) { return NewWindow(maxLimit+1, time.Second) }},
		{"window", func() (*Table, error) { return NewWindow(1, 0) }},
		{"window", func() (*Table, error) { return NewWindow(1, maxWindow+1) }},
		{"capacity", func() (*Table, error) { return New(1, time.Second, 1, WithCapacity(3)) }},
		{"memory", func() (*Table, error) { return New(1, time.Second, 1, WithMemory(SlotBytes*4-1)) }},
		{"clock", func() (*Table, error) { return New(1, time.Second, 1, WithClock(nil)) }},
		{"policy", func() (*Table, error) { return New(1, time.Second, 1, WithPolicy(Policy(2))) }},
		{"ipv6 prefix", func() (*Table, error) { return NewWindow(1, time.Second, WithIPv6Prefix(0)) }},
		{"ipv6 prefix", func() (*Table, error) { return NewWindow(1, time.Second, WithIPv6Prefix(129)) }},
	}
	for _, c := range cases {
		tb, err := c.make()
		var pe *limit.ParamError
		if tb != nil || !errors.As(err, &pe) || pe.Param != c.param || pe.Pkg != "keyed" {
			t.Errorf("%s: got %v, %v; want a keyed ParamError", c.param, tb, err)
		}
	}
	if _, err := New(tEvents, tPeriod, tBurst, WithMemory(1<<20), WithIPv6Prefix(128)); err != nil {
		t.Error(err)
	}
}

func TestCapacityAndAlignment(t *testing.T) {
	for _, c := range []struct {
		opt  Option
		want int
	}{{WithCapacity(4), 4}, {WithCapacity(5), 8}, {WithCapacity(1000), 1000}, {WithMemory(18 * 1000), 1000}, {WithMemory(18*1000 + 17), 1000}} {
		tb := newBucketTable(t, c.opt)
		if tb.Capacity() != c.want {
			t.Errorf("capacity %d, want %d", tb.Capacity(), c.want)
		}
		if p := fmt.Sprintf("%p", &tb.slots[0]); len(tb.slots) == 0 || addr(&tb.slots[0])%64 != 0 {
			t.Errorf("slots at %s, not on a cache line", p)
		}
	}
	if tb := newBucketTable(t); tb.Capacity() != DefaultCapacity {
		t.Errorf("default capacity %d", tb.Capacity())
	}
}

// model is each key's own limiter: a packed64 word stepped alone.
type model struct {
	k     *kind
	words map[string]uint64
}

func newModel(tb *Table) *model {
	// A kind of its own: the same parameters, a HighWater of its own.
	k, err := newBucketKind(tEvents, tPeriod, tBurst)
	if tb.k.window {
		k, err = newWindowKind(tLimit, tWindow)
	}
	if err != nil {
		panic(err)
	}
	return &model{k: k, words: map[string]uint64{}}
}

func (m *model) step(key string, now, n int64) (limit.Result, error) {
	ref := m.k.ref()
	next, r, write, err := m.k.step(m.words[key], now, ref, n)
	if write {
		m.k.raise(now, ref)
		m.words[key] = next
	}
	return r, err
}

// evictions records, per key, what lossy evictions forgave it.
type evictions struct {
	mu       sync.Mutex
	byTag    map[uint64]string
	forgiven map[string]uint64
	count    map[string]int
}

func watch(tb *Table, keys []string) *evictions {
	e := &evictions{byTag: map[uint64]string{}, forgiven: map[string]uint64{}, count: map[string]int{}}
	for _, k := range keys {
		e.byTag[tagOf(maphash.String(tb.seed, k))] = k
	}
	tb.evicted = func(tag, loss uint64) {
		e.mu.Lock()
		k := e.byTag[tag]
		e.forgiven[k] += loss
		e.count[k]++
		e.mu.Unlock()
	}
	return e
}

func keyNames(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("client-%d", i)
	}
	return keys
}

// TestMatchesOwnLimiters: on times that only move forward, every decision
// of a table far over capacity is its key's own limiter's decision, a key
// that a lossy eviction took a slot from starting afresh, and (Refuse) a
// refused key's own limiter being idle.
func TestMatchesOwnLimiters(t *testing.T) {
	kinds(t, func(t *testing.T, mk func(...Option) *Table) {
		for _, policy := range []Policy{EvictLeastLoss, Refuse} {
			for seed := range uint64(20) {
				r := rand.New(rand.NewPCG(seed, 1))
				tb := mk(WithCapacity(8), WithPolicy(policy))
				keys := keyNames(4 + r.IntN(40))
				ev := watch(tb, keys)
				m := newModel(tb)
				now := int64(r.Uint64N(1 << 50))
				refused := 0
				for range 3000 {
					now += int64(r.ExpFloat64() * float64(20*time.Microsecond) / float64(1+r.IntN(4)))
					key := keys[min(r.IntN(len(keys)), r.IntN(len(keys)))]
					n := int64(r.IntN(3))
					ev.mu.Lock()
					for k, c := range ev.count {
						if c > 0 {
							delete(m.words, k) // it lost its slot: afresh
							ev.count[k] = 0
						}
					}
					ev.mu.Unlock()
					got, err := tb.AllowNAt(key, now, n)
					if errors.Is(err, ErrFull) {
						refused++
						if got.OK && n > 0 || m.k.idle(m.words[key], m.k.ref()) > now {
							t.Fatalf("refused %q at %d with %+v; its own limiter is not idle", key, now, got)
						}
						continue
					}
					want, werr := m.step(key, now, n)
					if got != want || err != werr {
						t.Fatalf("seed %d: %q at %d n=%d: got %+v %v, its own limiter %+v %v", seed, key, now, n, got, err, want, werr)
					}
				}
				s := tb.Stats()
				if policy == Refuse && s.Evictions != 0 || policy == EvictLeastLoss && s.Refusals != 0 || int(s.Refusals) != refused {
					t.Fatalf("stats %+v, %d refused", s, refused)
				}
				if s.Admitted+s.Denied != 3000 || s.Keys > 8 || s.Keys != liveSlots(tb) {
					t.Fatalf("stats %+v do not add up (%d slots hold keys)", s, liveSlots(tb))
				}
			}
		}
	})
}

func liveSlots(tb *Table) int64 {
	var n int64
	for i := range tb.slots {
		if tb.slots[i][0] != 0 {
			n++
		}
	}
	return n
}

type use struct {
	key   string
	at, n int64
}

// schedule returns ops decisions on keys with times of the given shape.
func schedule(r *rand.Rand, keys []string, ops int, shape string) []use {
	us := make([]use, ops)
	now := int64(r.Uint64N(1<<40)) - 1<<39
	for i := range us {
		switch shape {
		case "random":
			now += int64(r.Uint64N(uint64(60 * time.Microsecond)))
		case "bursty":
			if r.IntN(30) == 0 {
				now += int64(r.Uint64N(uint64(3 * time.Millisecond)))
			}
		case "stale":
			now += int64(r.Uint64N(uint64(30 * time.Microsecond)))
		case "returning":
			now += int64(r.Uint64N(uint64(200 * time.Microsecond)))
		}
		at := now
		if shape == "stale" && r.IntN(3) == 0 || shape == "returning" && r.IntN(2) == 0 {
			at -= int64(r.Uint64N(uint64(3 * time.Millisecond)))
		}
		us[i] = use{key: keys[r.IntN(len(keys))], at: at, n: int64(1 + r.IntN(2))}
	}
	if shape == "shuffled" {
		for i := range us {
			us[i].at = int64(r.Uint64N(uint64(20 * time.Millisecond)))
		}
	}
	return us
}

// checkBound checks each key's admissions against its limiter's bound plus
// what evictions forgave it.
func checkBound(t *testing.T, tb *Table, admitted map[string][]bound.Use, forgiven map[string]uint64) {
	t.Helper()
	k := tb.k
	for key, uses := range admitted {
		var err error
		if k.window {
			u := make([]bound.Use, len(uses))
			for i, x := range uses {
				u[i] = bound.Use{At: x.At >> k.shift, Cost: x.Cost}
			}
			err = bound.Check(u, 2*uint64(k.w.Limit())+forgiven[key], uint64(k.w.Limit()), uint64(k.wu))
		} else {
			err = bound.CheckSlack(uses, uint64(tBurst)+forgiven[key], 1<<k.shift, tEvents, uint64(tPeriod))
		}
		if err != nil {
			t.Fatalf("key %q (forgiven %d): %v", key, forgiven[key], err)
		}
	}
}

// TestBound: each key stays within its bound plus what it was forgiven, on
// random, bursty, stale and shuffled times, many keys interleaved in
// tables far over capacity (so every key collides in its group).
func TestBound(t *testing.T) {
	runs := 12
	if testing.Short() || race.Enabled {
		runs = 3
	}
	kinds(t, func(t *testing.T, mk func(...Option) *Table) {
		for _, shape := range []string{"random", "bursty", "stale", "returning", "shuffled"} {
			for _, policy := range []Policy{EvictLeastLoss, Refuse} {
				for seed := range uint64(runs) {
					r := rand.New(rand.NewPCG(seed, 2))
					tb := mk(WithCapacity(4*(1+r.IntN(3))), WithPolicy(policy))
					keys := keyNames(2 + r.IntN(60))
					if shape == "returning" {
						keys = keys[:min(len(keys), 2+r.IntN(12))]
					}
					ev := watch(tb, keys)
					admitted := map[string][]bound.Use{}
					for _, u := range schedule(r, keys, 1500, shape) {
						res, err := tb.AllowNAt(u.key, u.at, u.n)
						if res.OK && err == nil {
							admitted[u.key] = append(admitted[u.key], bound.Use{At: u.at, Cost: u.n})
						}
					}
					if policy == Refuse && len(ev.forgiven) != 0 {
						t.Fatal("Refuse evicted")
					}
					checkBound(t, tb, admitted, ev.forgiven)
				}
			}
		}
	})
}

// TestMark: a key whose idle slot was reused does not start afresh at a
// stale now before it was idle (without the group's mark it would admit a
// second burst at the time of its first).
func TestMark(t *testing.T) {
	tb := newBucketTable(t, WithCapacity(4))
	// A key takes its burst at 1ms and is idle from 1.5ms; four other keys
	// take the group at 2ms; the key comes back with a stale now of 1ms.
	const ms = int64(time.Millisecond)
	if r, _ := tb.AllowNAt("a", ms, tBurst); !r.OK {
		t.Fatal("burst denied")
	}
	for i := range 4 {
		tb.AllowAt(fmt.Sprint("other", i), 2*ms)
	}
	if tb.Stats().Reuses == 0 {
		t.Fatal("no reuse")
	}
	if tb.AllowAt("a", ms) {
		t.Fatal("a key admitted a second burst at a time it had taken its first")
	}
	if r, _ := tb.AllowNAt("a", 5*ms/4, 1); r.OK || r.RetryAfter <= 0 {
		t.Fatalf("before the mark: %+v", r)
	}
}

// TestConcurrentBound: many goroutines, keys 100 times the capacity, stale
// and fresh times; each key within its bound plus what it was forgiven,
// and the counts add up.
func TestConcurrentBound(t *testing.T) {
	ops := 20000
	if testing.Short() || race.Enabled {
		ops = 3000
	}
	kinds(t, func(t *testing.T, mk func(...Option) *Table) {
		for _, policy := range []Policy{EvictLeastLoss, Refuse} {
			tb := mk(WithCapacity(8), WithPolicy(policy))
			keys := keyNames(800)
			ev := watch(tb, keys)
			const G = 8
			var (
				mu       sync.Mutex
				admitted = map[string][]bound.Use{}
				wg       sync.WaitGroup
			)
			var base int64 = 1 << 40
			for g := range G {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := rand.New(rand.NewPCG(uint64(g), 3))
					mine := map[string][]bound.Use{}
					for i := range ops {
						now := base + int64(i)*int64(10*time.Microsecond) - int64(r.Uint64N(uint64(time.Millisecond)))
						key := keys[r.IntN(len(keys))]
						if r.IntN(2) == 0 {
							key = keys[r.IntN(16)] // a few hot keys
						}
						n := int64(1 + r.IntN(2))
						if res, err := tb.AllowNAt(key, now, n); res.OK && err == nil {
							mine[key] = append(mine[key], bound.Use{At: now, Cost: n})
						}
					}
					mu.Lock()
					for k, u := range mine {
						admitted[k] = append(admitted[k], u...)
					}
					mu.Unlock()
				}()
			}
			wg.Wait()
			checkBound(t, tb, admitted, ev.forgiven)
			s := tb.Stats()
			var n int64
			for _, u := range admitted {
				n += int64(len(u))
			}
			if s.Admitted != n || s.Admitted+s.Denied != G*int64(ops) || s.Keys != liveSlots(tb) {
				t.Fatalf("stats %+v: %d admitted, %d slots hold keys", s, n, liveSlots(tb))
			}
			var forgiven uint64
			for _, f := range ev.forgiven {
				forgiven += f
			}
			if uint64(s.Forgiven) != forgiven {
				t.Fatalf("stats forgave %d, the evictions %d", s.Forgiven, forgiven)
			}
			// No pending claim is left, and no key is in two slots.
			seen := map[uint64]bool{}
			for i := range tb.slots {
				tag := tb.slots[i][0]
				if tag&pending != 0 || tag != 0 && seen[tag] {
					t.Fatalf("slot %d: tag %#x", i, tag)
				}
				seen[tag] = tag != 0
			}
		}
	})
}

// TestOneKeyManyGoroutines: goroutines racing to insert the same new keys
// into one group leave each key in one slot, and admit no more than one
// limiter would.
func TestOneKeyManyGoroutines(t *testing.T) {
	rounds := 300
	if testing.Short() || race.Enabled {
		rounds = 40
	}
	kinds(t, func(t *testing.T, mk func(...Option) *Table) {
		for round := range rounds {
			tb := mk(WithCapacity(4))
			now := int64(round) << 30
			var wg sync.WaitGroup
			var got [3]int64
			var mu sync.Mutex
			start := make(chan struct{})
			for g := range 6 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					for i := range 10 {
						k := (g + i) % 3
						if tb.AllowAt(fmt.Sprint("k", k), now) {
							mu.Lock()
							got[k]++
							mu.Unlock()
						}
					}
				}()
			}
			close(start)
			wg.Wait()
			for k, n := range got {
				if n != tb.Burst() {
					t.Fatalf("round %d: key %d admitted %d at one instant, want its burst %d", round, k, n, tb.Burst())
				}
			}
			if s := tb.Stats(); s.Keys != 3 || liveSlots(tb) != 3 {
				t.Fatalf("round %d: %+v", round, s)
			}
		}
	})
}

// TestRacingClaims: goroutines with different nows see different slots
// idle and race to put one new key in different slots; it ends in one
// slot, within one limiter's bound.
func TestRacingClaims(t *testing.T) {
	rounds := 200
	if testing.Short() || race.Enabled {
		rounds = 20
	}
	const T0, tok = int64(1 << 40), int64(tPeriod / tEvents)
	for round := range rounds {
		tb := newBucketTable(t, WithCapacity(4))
		// Slot by slot (as claimed): idle at T0+3tok, T0+tok, T0+3tok, T0+3tok.
		for i, n := range []int64{3, 1, 3, 3} {
			tb.AllowNAt(fmt.Sprint("f", i), T0, n)
		}
		// The first two claims wait for each other: both have chosen.
		var both sync.WaitGroup
		both.Add(2)
		var claims atomic.Int32
		tb.claiming = func() {
			if claims.Add(1) <= 2 {
				both.Done()
				both.Wait()
			}
		}
		var wg sync.WaitGroup
		var admitted atomic.Int64
		for g := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				now := T0 + 3*tok/2 // the second slot idle
				if g == 1 {
					now = T0 + 7*tok/2 // all idle: the first
				}
				for range 4 {
					if tb.AllowAt("k", now) {
						admitted.Add(1)
					}
				}
			}()
		}
		wg.Wait()
		tags := map[uint64]bool{}
		for i := range tb.slots {
			tag := tb.slots[i][0]
			if tag&pending != 0 || tags[tag] {
				t.Fatalf("round %d: slot %d holds %#x", round, i, tag)
			}
			tags[tag] = true
		}
		// Times T0+1.5tok and T0+3.5tok: at most burst + 2 tokens.
		if n := admitted.Load(); n > tBurst+2 {
			t.Fatalf("round %d: one key admitted %d", round, n)
		}
	}
}

// TestSeedSpreadsChosenKeys: keys chosen to share one group of one table
// spread over the groups of another (a different seed), as random keys do.
func TestSeedSpreadsChosenKeys(t *testing.T) {
	a := newBucketTable(t, WithCapacity(4096))
	b := newBucketTable(t, WithCapacity(4096))
	var chosen []string
	for i := 0; len(chosen) < 64; i++ {
		k := fmt.Sprint("attack-", i)
		if a.group(maphash.String(a.seed, k)) == 7 {
			chosen = append(chosen, k)
		}
	}
	groups := map[uint64]int{}
	for _, k := range chosen {
		groups[b.group(maphash.String(b.seed, k))]++
	}
	// 64 random keys in 1024 groups: about 62 distinct, and at most a few
	// in any one group.
	most := 0
	for _, c := range groups {
		most = max(most, c)
	}
	if len(groups) < 50 || most > 4 {
		t.Fatalf("64 keys aimed at one group of table a fall in %d groups of table b, at most %d in one", len(groups), most)
	}
}

func TestKeyForms(t *testing.T) {
	tb := newWindowTable(t, WithCapacity(64))
	const now = 1 << 40
	take := func(allow func() bool) int {
		n := 0
		for allow() {
			n++
		}
		return n
	}
	if n := take(func() bool { return tb.AllowAt("x", now) }); n != tLimit {
		t.Fatalf("string key took %d", n)
	}
	// The same bytes are the same key.
	if tb.AllowBytesAt([]byte("x"), now) {
		t.Fatal("[]byte key is not the string's")
	}
	var le [8]byte
	le[0] = 7
	if take(func() bool { return tb.AllowUint64At(7, now) }) != tLimit || tb.AllowBytesAt(le[:], now) {
		t.Fatal("uint64 key")
	}
	// IPv6 by /64, IPv4 alone, IPv4-mapped as IPv4.
	a1, a2 := netip.MustParseAddr("2001:db8:1:2::1"), netip.MustParseAddr("2001:db8:1:2:ffff::9%eth0")
	if take(func() bool { return tb.AllowAddrAt(a1, now) }) != tLimit || tb.AllowAddrAt(a2, now) {
		t.Fatal("one /64 is not one client")
	}
	if !tb.AllowAddrAt(netip.MustParseAddr("2001:db8:1:3::1"), now) {
		t.Fatal("another /64 shares a limiter")
	}
	v4 := netip.MustParseAddr("192.0.2.1")
	if take(func() bool { return tb.AllowAddrAt(v4, now) }) != tLimit || tb.AllowAddrAt(netip.AddrFrom16(v4.As16()), now) {
		t.Fatal("IPv4-mapped IPv6 is not its IPv4 address")
	}
	if !tb.AllowAddrAt(netip.MustParseAddr("192.0.2.2"), now) {
		t.Fatal("IPv4 addresses share")
	}
	t48 := newWindowTable(t, WithCapacity(64), WithIPv6Prefix(48))
	if take(func() bool { return t48.AllowAddrAt(a1, now) }) != tLimit || t48.AllowAddrAt(netip.MustParseAddr("2001:db8:1:ff::1"), now) {
		t.Fatal("a /48 prefix does not group")
	}
	if take(func() bool { return t48.AllowAddrAt(netip.Addr{}, now) }) != tLimit || t48.AllowAt("", now) {
		t.Fatal("the invalid Addr is not the empty key")
	}
	// Errors.
	if _, err := tb.AllowNAt("y", now, -1); err != limit.ErrNegativeCost {
		t.Fatal(err)
	}
	if r, err := tb.AllowNBytesAt([]byte("y"), now, tLimit+1); err != limit.ErrCostExceedsBurst || r.RetryAfter != limit.Never {
		t.Fatal(err)
	}
}

func TestRemaining(t *testing.T) {
	kinds(t, func(t *testing.T, mk func(...Option) *Table) {
		now := int64(1 << 40)
		tb := mk(WithCapacity(8), WithClock(func() int64 { return now }))
		if r := tb.Remaining("a"); r != tb.Burst() {
			t.Fatalf("a new key has %d, want %d", r, tb.Burst())
		}
		tb.AllowNAt("a", now, 2)
		if r := tb.RemainingAt("a", now); r != tb.Burst()-2 {
			t.Fatalf("after taking 2: %d", r)
		}
		if s := tb.Stats(); s.Admitted != 1 || s.Denied != 0 || s.Keys != 1 {
			t.Fatalf("queries counted or stored: %+v", s)
		}
	})
}

func TestRefuseRetryAfter(t *testing.T) {
	tb := newBucketTable(t, WithCapacity(4), WithPolicy(Refuse))
	const now = 1 << 40
	for i := range 4 {
		if r, _ := tb.AllowNAt(fmt.Sprint(i), now, 2); !r.OK {
			t.Fatal("denied")
		}
	}
	r, err := tb.AllowNAt("new", now, 1)
	if err != ErrFull || r.OK || r.RetryAfter != time.Duration(2*tPeriod/tEvents) {
		t.Fatalf("got %+v %v, want ErrFull after 200µs", r, err)
	}
	if r, err := tb.AllowNAt("new", now+int64(r.RetryAfter), 1); err != nil || !r.OK {
		t.Fatalf("at RetryAfter: %+v %v", r, err)
	}
	if s := tb.Stats(); s.Refusals != 1 || s.Reuses != 1 || s.Keys != 4 {
		t.Fatalf("%+v", s)
	}
}

func TestEvictLeastLoss(t *testing.T) {
	tb := newBucketTable(t, WithCapacity(4))
	const now = 1 << 40
	for i, n := range []int64{3, 1, 4, 2} {
		tb.AllowNAt(fmt.Sprint(i), now, n)
	}
	tb.AllowAt("new", now)
	if s := tb.Stats(); s.Evictions != 1 || s.Forgiven != 1 {
		t.Fatalf("%+v", s)
	}
	// Key 1 lost its slot: it starts afresh (its burst), the others keep theirs.
	if r, _ := tb.AllowNAt("1", now, tBurst); !r.OK {
		t.Fatal("the evicted key did not start afresh")
	}
	if r, _ := tb.AllowNAt("2", now, 2); r.OK {
		t.Fatal("a key that lost more was evicted")
	}
}

// TestEndsOfTime: at each end of int64 time, keys that take their whole
// burst are not idle (Refuse keeps a fifth key out of four slots) and get
// nothing more at that time.
func TestEndsOfTime(t *testing.T) {
	kinds(t, func(t *testing.T, mk func(...Option) *Table) {
		for _, now := range []int64{math.MinInt64, math.MinInt64 + 1, -1, 0, math.MaxInt64 - 1, math.MaxInt64} {
			tb := mk(WithCapacity(4), WithPolicy(Refuse))
			for i := range 4 {
				if r, err := tb.AllowNAt(fmt.Sprint(i), now, tb.Burst()); !r.OK || err != nil {
					t.Fatalf("at %d: key %d denied its burst: %+v %v", now, i, r, err)
				}
			}
			if r, err := tb.AllowNAt("fifth", now, 1); r.OK || err != ErrFull {
				t.Fatalf("at %d: a fifth key got %+v %v, want ErrFull", now, r, err)
			}
			for i := range 4 {
				if tb.AllowAt(fmt.Sprint(i), now) {
					t.Fatalf("at %d: key %d admitted beyond its burst", now, i)
				}
			}
		}
	})
}

// TestRetryAfterAtTheEndsOfTime: a key new to a group whose mark is near
// the top of time, at a now near the bottom, waits limit.Never, not a
// wrapped negative time.
func TestRetryAfterAtTheEndsOfTime(t *testing.T) {
	kinds(t, func(t *testing.T, mk func(...Option) *Table) {
		tb := mk(WithCapacity(4))
		for i := range 4 {
			tb.AllowNAt(fmt.Sprint(i), math.MaxInt64-1, tb.Burst())
		}
		tb.AllowAt("evictor", math.MaxInt64-1) // a lossy eviction: the mark is at MaxInt64-1
		var evicted string
		for i := range 4 {
			if tb.RemainingAt(fmt.Sprint(i), math.MaxInt64-1) == tb.Burst() {
				evicted = fmt.Sprint(i)
			}
		}
		if evicted == "" {
			t.Fatal("no key was evicted")
		}
		r, err := tb.AllowNAt(evicted, math.MinInt64, 1)
		if err != nil || r.OK || r.RetryAfter != limit.Never {
			t.Fatalf("got %+v %v, want a denial until Never", r, err)
		}
	})
}

func TestZeroAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector allocates")
	}
	tb := newBucketTable(t, WithCapacity(64))
	keys := keyNames(1000)
	b := []byte("bytes-key")
	addr := netip.MustParseAddr("2001:db8::1")
	i := 0
	allocs := testing.AllocsPerRun(1000, func() {
		i++
		now := int64(i) * 1000
		tb.AllowAt(keys[i%len(keys)], now) // new keys, evictions
		tb.AllowBytesAt(b, now)
		tb.AllowUint64At(uint64(i), now)
		tb.AllowAddrAt(addr, now)
		tb.AllowNAt(keys[i%7], now, 2)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per run", allocs)
	}
}

func TestClock(t *testing.T) {
	now := int64(1 << 40)
	tb := newBucketTable(t, WithClock(func() int64 { return now }))
	for range tBurst {
		if !tb.Allow("k") || !tb.AllowBytes([]byte("b")) || !tb.AllowUint64(1) || !tb.AllowAddr(netip.MustParseAddr("10.0.0.1")) {
			t.Fatal("denied within the burst")
		}
	}
	if tb.Allow("k") {
		t.Fatal("admitted beyond the burst")
	}
	now += int64(tPeriod / tEvents)
	if r, err := tb.AllowN("k", 1); !r.OK || err != nil {
		t.Fatal("no refill on the clock")
	}
	for _, f := range []func() (limit.Result, error){
		func() (limit.Result, error) { return tb.AllowNBytes([]byte("b"), 1) },
		func() (limit.Result, error) { return tb.AllowNUint64(1, 1) },
		func() (limit.Result, error) { return tb.AllowNAddr(netip.MustParseAddr("10.0.0.1"), 1) },
	} {
		if r, err := f(); !r.OK || err != nil {
			t.Fatal("no refill on the clock")
		}
	}
}

// addr returns p's address, for alignment checks.
func addr(p *slot) uintptr { return uintptr(unsafe.Pointer(p)) }

// TestFill: busy keys (none idle) placed into a table of 5/4 slots a key:
// how many find both groups full. Logged; the doc quotes it.
func TestFill(t *testing.T) {
	n := 1000000
	if testing.Short() || race.Enabled {
		n = 20000
	}
	tb := newBucketTable(t, WithCapacity(n*5/4), WithPolicy(Refuse))
	const now = 1 << 40
	refused := 0
	for i := range n {
		if _, err := tb.AllowNUint64At(uint64(i), now, 1); err == ErrFull {
			refused++
		}
	}
	s := tb.Stats()
	t.Logf("%d busy keys in %d slots: %d refused (%.3g), %d placed", n, tb.Capacity(), refused, float64(refused)/float64(n), s.Keys)
	if s.Keys+int64(refused) != int64(n) {
		t.Fatalf("%+v", s)
	}
}
