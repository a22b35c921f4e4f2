package keyed

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/cellrate/cellrate/internal/bound"
	"github.com/cellrate/cellrate/internal/packed64core"
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
	tok     = int64(tPeriod / tEvents)
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

func (t *Table) burst() int64 { return t.k.burst() }

func keyNames(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("client-%d", i)
	}
	return keys
}

func (t *Table) tag(key string) uint64 { return tagOf(t.strHash(key)) }

func liveSlots(tb *Table) int64 {
	var n int64
	for i := range tb.slots {
		if tb.slots[i][0] != 0 {
			n++
		}
	}
	return n
}

func TestParamErrors(t *testing.T) {
	cases := []struct {
		param string
		make  func() (*Table, error)
	}{
		{"period", func() (*Table, error) { return New(1, 0, 1) }},
		{"events", func() (*Table, error) { return New(0, time.Second, 1) }},
		{"events", func() (*Table, error) { return New(5, 4, 1) }},
		{"burst", func() (*Table, error) { return New(1, time.Second, 0) }},
		{"burst", func() (*Table, error) { return New(1, time.Second, 1<<40) }},
		{"limit", func() (*Table, error) { return NewWindow(0, time.Second) }},
		{"limit", func() (*Table, error) { return NewWindow(maxLimit+1, time.Second) }},
		{"window", func() (*Table, error) { return NewWindow(1, 0) }},
		{"window", func() (*Table, error) { return NewWindow(1, maxWindow+1) }},
		{"capacity", func() (*Table, error) { return New(1, time.Second, 1, WithCapacity(3)) }},
		{"clock", func() (*Table, error) { return New(1, time.Second, 1, WithClock(nil)) }},
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
	if _, err := New(tEvents, tPeriod, tBurst, WithCapacity(1<<15), WithIPv6Prefix(128)); err != nil {
		t.Error(err)
	}
	if tb := newBucketTable(t); tb.capacity() != defaultCapacity {
		t.Errorf("default capacity %d", tb.capacity())
	}
}

func TestCapacityAndAlignment(t *testing.T) {
	for _, c := range []struct {
		opt  Option
		want int
	}{{WithCapacity(4), 4}, {WithCapacity(5), 8}, {WithCapacity(1000), 1000}} {
		tb := newBucketTable(t, c.opt)
		if tb.capacity() != c.want || len(tb.sk) != c.want {
			t.Errorf("capacity %d (%d registers), want %d", tb.capacity(), len(tb.sk), c.want)
		}
		if p := fmt.Sprintf("%p", &tb.slots[0]); len(tb.slots) == 0 || addr(&tb.slots[0])%64 != 0 {
			t.Errorf("slots at %s, not on a cache line", p)
		}
	}
}

// addr returns p's address, for alignment checks.
func addr(p *slot) uintptr { return uintptr(unsafe.Pointer(p)) }

// TestLargeBurst: any burst gcra takes, exact to the nanosecond: a quota of
// 100,000 a day gives exactly 100,000 at once, and the next one a token's
// time (864ms) later, not a nanosecond before.
func TestLargeBurst(t *testing.T) {
	day := 24 * time.Hour
	tb, err := New(100000, day, 100000, WithCapacity(8))
	if err != nil {
		t.Fatal(err)
	}
	const now = 1 << 50
	if r, _ := tb.AllowNAt("quota", now, 60000); !r.OK {
		t.Fatal("60,000 denied")
	}
	n := int64(60000)
	for tb.AllowAt("quota", now) {
		n++
	}
	if n != 100000 {
		t.Fatalf("admitted %d at one instant, want 100000", n)
	}
	next := now + int64(day)/100000
	if tb.AllowAt("quota", next-1) || !tb.AllowAt("quota", next) {
		t.Fatal("the next token not at exactly 864ms")
	}
	if tb, err := New(1, time.Nanosecond, 1); err != nil || !tb.AllowAt("k", 0) || tb.AllowAt("k", 0) || !tb.AllowAt("k", 1) {
		t.Fatalf("one a nanosecond: %v", err)
	}
}

// own is each key's own limiter, stepped alone: the reference the table's
// decisions are held to.
type own struct {
	k     *kind
	words map[string]uint64
}

func newOwn(tb *Table) *own {
	k, err := newBucketKind(tEvents, tPeriod, tBurst)
	if tb.k.window {
		k, err = newWindowKind(tLimit, tWindow)
	}
	if err != nil {
		panic(err)
	}
	return &own{k: k, words: map[string]uint64{}}
}

func (m *own) step(key string, now, n int64) (limit.Result, error) {
	ref := m.k.ref()
	next, r, write, err := m.k.step(m.words[key], now, ref, n)
	if write {
		m.k.raise(now, ref)
		m.words[key] = next
	}
	return r, err
}

// TestMatchesOwnLimiters: on times that only move forward, while the keys
// that owed something in the last 10ms (the grace) fit the table, every
// decision is the key's own limiter's, though keys far more than the slots
// come and go (their idle slots reused).
func TestMatchesOwnLimiters(t *testing.T) {
	kinds(t, func(t *testing.T, mk func(...Option) *Table) {
		seeds := uint64(10)
		if testing.Short() || race.Enabled {
			seeds = 2
		}
		for _, policy := range []policy{evict, refuse} {
			for seed := range seeds {
				r := rand.New(rand.NewPCG(seed, 1))
				tb := mk(WithCapacity(512), withPolicy(policy))
				keys := keyNames(2000)
				m := newOwn(tb)
				now := int64(r.Uint64N(1<<50)) - 1<<49
				for i := range 4000 {
					// About 100 keys' worth of requests in the grace and a
					// burst's time: they fit 512 slots.
					now += int64(r.Uint64N(uint64(2 * tok)))
					key := keys[r.IntN(len(keys))]
					n := int64(r.IntN(3))
					got, err := tb.AllowNAt(key, now, n)
					want, werr := m.step(key, now, n)
					if got != want || err != werr {
						t.Fatalf("seed %d op %d: %q at %d n=%d: got %+v %v, its own limiter %+v %v", seed, i, key, now, n, got, err, want, werr)
					}
				}
				s := tb.Stats()
				if s.Evictions != 0 || s.Refusals != 0 || tb.reuses.Load() == 0 || s.Keys != liveSlots(tb) {
					t.Fatalf("stats %+v (%d slots hold keys)", s, liveSlots(tb))
				}
			}
		}
	})
}

// TestDelaysOnlyFromTheSketch: on forward times in a table far over
// capacity, a key holding a written word decides as its own limiter does,
// and a key starting from the sketch (new, or back after losing its slot)
// never admits what its own limiter would deny: the sketch can only delay.
// After each decision the own limiter goes on from the table's word, so
// a delay is not counted twice.
func TestDelaysOnlyFromTheSketch(t *testing.T) {
	kinds(t, func(t *testing.T, mk func(...Option) *Table) {
		delays := 0
		seeds := uint64(10)
		if testing.Short() || race.Enabled {
			seeds = 3
		}
		for seed := range seeds {
			r := rand.New(rand.NewPCG(seed, 5))
			tb := mk(WithCapacity(8))
			keys := keyNames(40)
			m := newOwn(tb)
			now := int64(r.Uint64N(1 << 50))
			for range 3000 {
				now += int64(r.Uint64N(uint64(tok / 4)))
				key := keys[r.IntN(len(keys))]
				_, w0, held := tb.find(key)
				held = held && w0 != 0 // a written word, not one starting from the sketch
				if held && w0 != m.words[key] {
					t.Fatalf("seed %d: %q holds %#x, its own limiter %#x", seed, key, w0, m.words[key])
				}
				got, _ := tb.AllowNAt(key, now, 1)
				want, _ := m.step(key, now, 1)
				switch {
				case held && got != want:
					t.Fatalf("seed %d: %q at %d: table %+v, own %+v", seed, key, now, got, want)
				case got.OK && !want.OK:
					t.Fatalf("seed %d: %q at %d started from the sketch and was admitted, its own limiter denied", seed, key, now)
				case got.OK != want.OK:
					delays++
					// A delay lasts at most what a key owes after its
					// whole burst: burst tokens, or two windows.
					most := time.Duration(tBurst * tok)
					if tb.k.window {
						most = 2*tWindow + time.Duration(1)<<tb.k.shift
					}
					if got.RetryAfter > most {
						t.Fatalf("seed %d: %q delayed %v", seed, key, got.RetryAfter)
					}
				}
				if _, w, ok := tb.find(key); ok && w != 0 {
					m.words[key] = w
				} else {
					delete(m.words, key)
				}
			}
		}
		t.Logf("%d delays", delays)
	})
}

func windowState(k *kind, w uint64) packed64core.WindowState {
	return packed64core.WindowState{Word: packed64core.WindowWord(w), Ref: k.ref()}
}

// find returns the slot index and word of key, if the table holds it.
func (t *Table) find(key string) (int, uint64, bool) {
	p := t.probe(t.strHash(key))
	i, w, ok := p.find()
	return i, w, ok
}

type use struct {
	key   string
	at, n int64
}

// schedule returns ops decisions on keys with times of the given shape.
func schedule(r *rand.Rand, keys []string, ops int, shape string, burst int64) []use {
	us := make([]use, ops)
	now := int64(r.Uint64N(1<<40)) - 1<<39
	fresh := 0
	for i := range us {
		switch shape {
		case "random", "whole-burst", "keeper", "ties":
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
		u := use{key: keys[r.IntN(len(keys))], at: at, n: int64(1 + r.IntN(2))}
		// Floods: the abuser (keys[0]) every other decision, fresh keys
		// between, taking their whole burst, one unit, or the abuser
		// keeping one unit.
		switch {
		case shape == "whole-burst" && i%2 == 1:
			u = use{key: fmt.Sprint("flood", fresh), at: at, n: burst}
			fresh++
		case shape == "ties" && i%2 == 1:
			u = use{key: fmt.Sprint("flood", fresh), at: at, n: 1}
			fresh++
		case shape == "keeper" && i%2 == 1:
			u = use{key: fmt.Sprint("flood", fresh), at: at, n: burst}
			fresh++
		case shape == "keeper" || shape == "whole-burst" || shape == "ties":
			u = use{key: keys[0], at: at, n: max(1, burst-1)}
		}
		us[i] = u
	}
	if shape == "shuffled" {
		for i := range us {
			us[i].at = int64(r.Uint64N(uint64(20 * time.Millisecond)))
		}
	}
	return us
}

// checkBound checks each key's admissions against its own limiter's exact
// bound: nothing added for evictions.
func checkBound(t *testing.T, tb *Table, admitted map[string][]bound.Use) {
	t.Helper()
	k := tb.k
	for key, uses := range admitted {
		var err error
		if k.window {
			u := make([]bound.Use, len(uses))
			for i, x := range uses {
				u[i] = bound.Use{At: x.At >> k.shift, Cost: x.Cost}
			}
			err = bound.Check(u, 2*uint64(k.w.Limit()), uint64(k.w.Limit()), uint64(k.wu))
		} else {
			err = bound.Check(uses, tBurst, tEvents, uint64(tPeriod))
		}
		if err != nil {
			t.Fatalf("key %q: %v", key, err)
		}
	}
}

// TestBound: each key stays within its own limiter's exact bound, on
// random, bursty, stale and shuffled times and under floods of fresh keys
// (whole-burst keys, cost-1 ties, an abuser keeping one unit), many keys
// interleaved in tables far over capacity.
func TestBound(t *testing.T) {
	runs := 8
	switch {
	case race.Enabled:
		runs = 1
	case testing.Short():
		runs = 2
	}
	kinds(t, func(t *testing.T, mk func(...Option) *Table) {
		for _, shape := range []string{"random", "bursty", "stale", "returning", "shuffled", "whole-burst", "keeper", "ties"} {
			for _, policy := range []policy{evict, refuse} {
				for seed := range uint64(runs) {
					r := rand.New(rand.NewPCG(seed, 2))
					tb := mk(WithCapacity(4*(1+r.IntN(3))), withPolicy(policy))
					keys := keyNames(2 + r.IntN(60))
					if shape == "returning" {
						keys = keys[:min(len(keys), 2+r.IntN(12))]
					}
					admitted := map[string][]bound.Use{}
					for _, u := range schedule(r, keys, 1500, shape, tb.burst()) {
						res, err := tb.AllowNAt(u.key, u.at, u.n)
						if res.OK && err == nil {
							admitted[u.key] = append(admitted[u.key], bound.Use{At: u.at, Cost: u.n})
						}
					}
					if s := tb.Stats(); policy == refuse && s.Evictions != 0 {
						t.Fatal("a table with WithRefuse evicted")
					}
					checkBound(t, tb, admitted)
				}
			}
		}
	})
}

// TestComesBackOwing: a key whose slot is taken (idle at the taker's later
// now, or still owing) does not start afresh at its own earlier time: it
// owes exactly what it did, no more, once it comes back.
func TestComesBackOwing(t *testing.T) {
	const ms = int64(time.Millisecond)
	for _, at := range []int64{ms, ms + tBurst*tok + grace} { // four keys take the group at once, or after a is idle
		tb := newBucketTable(t, WithCapacity(4))
		if r, _ := tb.AllowNAt("a", ms, tBurst); !r.OK {
			t.Fatal("burst denied")
		}
		for _, k := range apart(tb, "a", 4) {
			tb.AllowNAt(k, at, tBurst)
		}
		if _, _, held := tb.find("a"); held {
			t.Fatal("a kept its slot")
		}
		// Its own limiter admits the next token at ms+tok, the whole
		// burst at ms+5tok.
		if tb.AllowAt("a", ms) || tb.AllowAt("a", ms+tok-1) {
			t.Fatal("a key admitted again before it had paid for its first token")
		}
		if r, _ := tb.AllowNAt("a", ms+tBurst*tok, tBurst); !r.OK {
			t.Fatal("a key that paid its debt did not get its burst")
		}
	}
	// The window: a key that counted its limit at 1ms waits until its
	// window no longer counts it.
	tb := newWindowTable(t, WithCapacity(4))
	tb.AllowNAt("a", ms, tLimit)
	for i := range 4 {
		tb.AllowNAt(fmt.Sprint("other", i), ms, tLimit)
	}
	if r, _ := tb.AllowNAt("a", ms, 1); r.OK || r.RetryAfter <= 0 {
		t.Fatalf("a window key came back empty: %+v", r)
	}
}

// apart returns n keys none of whose sketch registers is one of key's.
func apart(tb *Table, key string, n int) []string {
	i, j := tb.sk.regs(tb.tag(key))
	var out []string
	for x := 0; len(out) < n; x++ {
		k := fmt.Sprint("other", x)
		a, b := tb.sk.regs(tb.tag(k))
		if a != i && a != j && b != i && b != j {
			out = append(out, k)
		}
	}
	return out
}

// TestEvictMostOwed: a new key in a full group takes the slot of the key
// that owes most, which comes back owing exactly that; the others keep
// their slots.
func TestEvictMostOwed(t *testing.T) {
	tb := newBucketTable(t, WithCapacity(4))
	const now = 1 << 40
	var evicted []uint64
	tb.evicted = func(tag, o uint64) { evicted = append(evicted, tag, o) }
	for i, n := range []int64{3, 1, 4, 2} {
		tb.AllowNAt(fmt.Sprint(i), now, n)
	}
	tb.AllowAt("new", now)
	if s := tb.Stats(); s.Evictions != 1 || len(evicted) != 2 || evicted[0] != tb.tag("2") {
		t.Fatalf("%+v, evicted %#x", s, evicted)
	}
	if _, _, held := tb.find("2"); held {
		t.Fatal("the key owing most kept its slot")
	}
	for i, n := range []int64{3, 1, 2} {
		if r := tb.RemainingAt(fmt.Sprint([]int{0, 1, 3}[i]), now); r != tBurst-n {
			t.Fatalf("key %d: %d remaining", i, r)
		}
	}
	if r := tb.RemainingAt("2", now); r != 1 {
		t.Fatalf("the evicted key has %d, want the 1 it had", r)
	}
}

// TestEvictedDebt: what the sketch records for an evicted key is what its
// own limiter owes, computed independently: for a bucket its state; for a
// window the first time its estimate is 0 and stays so.
func TestEvictedDebt(t *testing.T) {
	kinds(t, func(t *testing.T, mk func(...Option) *Table) {
		for seed := range uint64(20) {
			r := rand.New(rand.NewPCG(seed, 7))
			tb := mk(WithCapacity(4))
			m := newOwn(tb)
			names := map[uint64]string{}
			var errs []string
			now := int64(1<<40) + int64(r.Uint64N(1<<30))
			last := map[string]int64{}
			tb.evicted = func(tag, o uint64) {
				key := names[tag]
				w := m.words[key]
				if !tb.k.window {
					if o != w {
						errs = append(errs, fmt.Sprintf("%s: recorded %d, its word %d", key, o, w))
					}
					return
				}
				if w == 0 {
					return
				}
				// Idle from o: its estimate is 0 then, and it is no later
				// than two windows after its last admission.
				idle := int64(o ^ signBit)
				st := windowState(m.k, w)
				unit := int64(1) << m.k.shift
				if o == 0 || m.k.w.EstimateAt(st, idle) != 0 || idle > last[key]+2*int64(tWindow)+unit {
					errs = append(errs, fmt.Sprintf("%s: idle from %d (last admitted %d), estimate %v", key, idle, last[key], m.k.w.EstimateAt(st, idle)))
				}
			}
			for i := range 400 {
				key := fmt.Sprint("k", r.IntN(30))
				names[tb.tag(key)] = key
				now += int64(r.Uint64N(uint64(tok)))
				n := 1 + r.Int64N(tb.burst())
				_ = i
				got, _ := tb.AllowNAt(key, now, n)
				if _, w, held := tb.find(key); held {
					m.words[key] = w
				}
				if got.OK {
					last[key] = now
				}
			}
			if len(errs) > 0 {
				t.Fatalf("seed %d: %v", seed, errs[0])
			}
			if tb.Stats().Evictions+tb.reuses.Load() == 0 {
				t.Fatal("nothing evicted")
			}
		}
	})
}

// TestNewKeyAgainstBothRegisters: a new key starts from the lesser of its
// two registers, at stale times too: another key's debt in one register
// delays no one, in both delays the key until the lesser is paid.
func TestNewKeyAgainstBothRegisters(t *testing.T) {
	kinds(t, func(t *testing.T, mk func(...Option) *Table) {
		tb := mk(WithCapacity(1024))
		const now = int64(1 << 40)
		other := tb.newTable(t)
		o1 := other.owedAfterBurst(now + 10*tok) // debts of keys taken at later times
		o2 := other.owedAfterBurst(now + 20*tok)
		key := "k"
		i, j := tb.sk.regs(tb.tag(key))
		if i == j {
			t.Skip("one register")
		}
		tb.sk[i].Store(o2)
		if r, _ := tb.AllowNAt(key, now, tb.burst()); !r.OK {
			t.Fatal("one register's debt delayed a key")
		}
		tb2 := mk(WithCapacity(1024))
		i, j = tb2.sk.regs(tb2.tag(key))
		tb2.sk[i].Store(o2)
		tb2.sk[j].Store(o1)
		r, _ := tb2.AllowNAt(key, now, 1)
		if r.OK || r.RetryAfter <= 0 {
			t.Fatalf("debts in both registers did not delay: %+v", r)
		}
		// It is paid when the lesser debt (o1's key's burst, taken at
		// now+10tok) is: admitted then, with the limiter that debt left.
		var want limit.Result
		if w, nb := tb2.k.start(o1, tb2.k.ref(), now); now < nb {
			want = notBefore(nb, now, 1)
		} else {
			_, want, _, _ = tb2.k.step(w, now, tb2.k.ref(), 1)
		}
		if r != want {
			t.Fatalf("got %+v, want %+v: the lesser debt's", r, want)
		}
		if r2, _ := tb2.AllowNAt(key, now+int64(r.RetryAfter), 1); !r2.OK {
			t.Fatalf("after RetryAfter %d: %+v", r.RetryAfter, r2)
		}
	})
}

// newTable returns an empty table of t's kind and parameters.
func (t *Table) newTable(tt testing.TB) *Table {
	if t.k.window {
		return newWindowTable(tt, WithCapacity(4))
	}
	return newBucketTable(tt, WithCapacity(4))
}

// owedAfterBurst returns what a key owes after taking its whole burst at now.
func (t *Table) owedAfterBurst(now int64) uint64 {
	w, _, _, _ := t.k.step(0, now, t.k.ref(), t.burst())
	t.k.raise(now, t.k.ref())
	return t.k.owed(w, t.k.ref())
}

// TestConcurrentBound: many goroutines, keys 100 times the capacity, stale
// and fresh times, floods of whole-burst keys; each key within its own
// exact bound, and the count of keys is the slots that hold one.
func TestConcurrentBound(t *testing.T) {
	ops := 20000
	switch {
	case race.Enabled:
		ops = 1500
	case testing.Short():
		ops = 3000
	}
	kinds(t, func(t *testing.T, mk func(...Option) *Table) {
		for _, policy := range []policy{evict, refuse} {
			tb := mk(WithCapacity(8), withPolicy(policy))
			keys := keyNames(800)
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
						n := int64(1 + r.IntN(2))
						switch r.IntN(4) {
						case 0, 1:
							key = keys[r.IntN(16)] // a few hot keys
						case 2:
							key, n = fmt.Sprint("flood", g, "-", i), tb.burst()
						}
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
			checkBound(t, tb, admitted)
			if s := tb.Stats(); s.Keys != liveSlots(tb) {
				t.Fatalf("stats %+v: %d slots hold keys", s, liveSlots(tb))
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

// TestPaidDebtIsNone: a debt the sketch holds that was paid long before
// now (for a window, further back than a window word's time field
// reaches) starts a key fresh.
func TestPaidDebtIsNone(t *testing.T) {
	kinds(t, func(t *testing.T, mk func(...Option) *Table) {
		tb := mk(WithCapacity(1024))
		const now = int64(1 << 50)
		tb.AllowAt("other", now) // the table has seen now
		// Paid an hour ago; for a window, three wraps of its time field and
		// a quarter window ago, which a word's field would misread as a
		// quarter window ago.
		at := now - int64(time.Hour)
		if tb.k.window {
			at = now - 3*int64(tb.k.w.Wrap()) - int64(tWindow)/4
		}
		old := tb.newTable(t).owedAfterBurst(at)
		i, j := tb.sk.regs(tb.tag("k"))
		tb.sk[i].Store(old)
		tb.sk[j].Store(old)
		if r, _ := tb.AllowNAt("k", now, tb.burst()); !r.OK {
			t.Fatalf("a debt paid long ago delayed a key: %+v", r)
		}
	})
}

// withPolicy sets the policy by its value, for tests that run both.
func withPolicy(p policy) Option { return func(c *config) { c.policy = p } }

// New refuses a capacity whose table passes the Go memory limit, naming
// both sizes, and takes one that fits it exactly (the limit is soft: the
// rest of the heap passing it only makes the collector run more).
func TestCapacityMemoryLimit(t *testing.T) {
	const keys = 1 << 16
	need := int64(keys) * 24 // WithCapacity's doc: 24 bytes a slot
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(need))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := New(1, time.Second, 1, WithCapacity(keys)); err != nil {
		t.Fatalf("%d slots under the limit: %v", keys, err)
	}
	runtime.ReadMemStats(&after)
	// Besides the table: the Table itself and its striped counters' cells,
	// one a P each.
	slack := int64(16<<10 + 4<<10*runtime.GOMAXPROCS(0))
	if got := int64(after.TotalAlloc - before.TotalAlloc); got < need || got > need+slack {
		t.Fatalf("New of %d slots allocated %d bytes, want the %d the limit is checked against (and at most %d more)", keys, got, need, slack)
	}
	debug.SetMemoryLimit(need - 1)
	tb, err := New(1, time.Second, 1, WithCapacity(keys))
	var pe *limit.ParamError
	if !errors.As(err, &pe) || pe.Param != "capacity" || tb != nil ||
		!strings.Contains(err.Error(), fmt.Sprint(need)) || !strings.Contains(err.Error(), fmt.Sprint(need-1)) {
		t.Fatalf("%d slots over a limit of %d bytes: %v, %v", keys, need-1, tb, err)
	}
	if _, err := NewWindow(1, time.Second, WithCapacity(keys)); !errors.As(err, &pe) {
		t.Fatalf("NewWindow over the limit: %v", err)
	}
}
