package keyed

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/netip"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cellrate/cellrate/internal/race"
	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/nanotime"
)

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
				if n != tb.burst() {
					t.Fatalf("round %d: key %d admitted %d at one instant, want its burst %d", round, k, n, tb.burst())
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
	const T0 = int64(1 << 40)
	for round := range rounds {
		tb := newBucketTable(t, WithCapacity(4))
		// Slot by slot (as claimed): paid up at T0+3tok, T0+tok, T0+3tok,
		// T0+3tok, so idle a grace later.
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
				now := T0 + 3*tok/2 + grace // the second slot idle
				if g == 1 {
					now = T0 + 7*tok/2 + grace // all idle: the first
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
		// Both claims went in (two idle slots reused), one was given up
		// (its slot left empty): Stats counts the keys the slots hold.
		if s := tb.Stats(); s.Keys != liveSlots(tb) || liveSlots(tb) != 3 || tb.reuses.Load() != 2 {
			t.Fatalf("round %d: %+v, %d reuses, %d slots held; want 3 keys in 3 slots after 2 reuses", round, s, tb.reuses.Load(), liveSlots(tb))
		}
		// Times a grace after T0+1.5tok and T0+3.5tok: at most burst + 2 tokens.
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
		if a.group(a.strHash(k)) == 7 {
			chosen = append(chosen, k)
		}
	}
	groups := map[uint64]int{}
	for _, k := range chosen {
		groups[b.group(b.strHash(k))]++
	}
	most := 0
	for _, c := range groups {
		most = max(most, c)
	}
	if len(groups) < 50 || most > 4 {
		t.Fatalf("64 keys aimed at one group of table a fall in %d groups of table b, at most %d in one", len(groups), most)
	}
}

// TestKindsNeverShare: the same bytes as a string, a number and an
// address are three limiters; a string and a []byte of the same bytes are
// one.
func TestKindsNeverShare(t *testing.T) {
	tb := newWindowTable(t, WithCapacity(64))
	const now = 1 << 40
	take := func(allow func() bool) int {
		n := 0
		for n <= tLimit && allow() {
			n++
		}
		return n
	}
	if take(func() bool { return tb.AllowAt("ABCD", now) }) != tLimit {
		t.Fatal("string key")
	}
	if tb.AllowBytesAt([]byte("ABCD"), now) {
		t.Fatal("a []byte key is not its string's")
	}
	if take(func() bool { return tb.AllowAddrAt(netip.AddrFrom4([4]byte{'A', 'B', 'C', 'D'}), now) }) != tLimit {
		t.Fatal("the address 65.66.67.68 shares the string ABCD's limiter")
	}
	if take(func() bool { return tb.AllowUint64At(0x44434241, now) }) != tLimit {
		t.Fatal("the number with ABCD's bytes shares a limiter")
	}
	var le [8]byte
	le[0] = 7
	if take(func() bool { return tb.AllowUint64At(7, now) }) != tLimit || take(func() bool { return tb.AllowBytesAt(le[:], now) }) != tLimit {
		t.Fatal("a number and its 8 bytes share a limiter")
	}
	v6 := netip.MustParseAddr("2001:db8::")
	b16 := v6.As16()
	if take(func() bool { return tb.AllowAddrAt(v6, now) }) != tLimit || take(func() bool { return tb.AllowBytesAt(b16[:], now) }) != tLimit {
		t.Fatal("an IPv6 prefix and its 16 bytes share a limiter")
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
	if take(func() bool { return t48.AllowAddrAt(netip.Addr{}, now) }) != tLimit || t48.AllowAddrAt(netip.Addr{}, now) {
		t.Fatal("the invalid Addr is not one key")
	}
	if _, err := tb.AllowNAt("y", now, -1); err != limit.ErrNegativeCost {
		t.Fatal(err)
	}
	if r, err := tb.AllowNAt("y", now, tLimit+1); err != limit.ErrCostExceedsBurst || r.RetryAfter != limit.Never {
		t.Fatal(err)
	}
}

func TestRemaining(t *testing.T) {
	kinds(t, func(t *testing.T, mk func(...Option) *Table) {
		now := int64(1 << 40)
		tb := mk(WithCapacity(8), WithClock(func() int64 { return now }))
		if r := tb.RemainingAt("a", now); r != tb.burst() {
			t.Fatalf("a new key has %d, want %d", r, tb.burst())
		}
		tb.AllowNAt("a", now, 2)
		if r := tb.RemainingAt("a", now); r != tb.burst()-2 {
			t.Fatalf("after taking 2: %d", r)
		}
		if s := tb.Stats(); s.Keys != 1 {
			t.Fatalf("queries counted or stored: %+v", s)
		}
	})
}

func TestRefuseRetryAfter(t *testing.T) {
	kinds(t, func(t *testing.T, mk func(...Option) *Table) {
		tb := mk(WithCapacity(4), WithRefuse())
		const now = 1 << 40
		for i := range 4 {
			if r, _ := tb.AllowNAt(fmt.Sprint(i), now, 2+int64(i%2)); !r.OK {
				t.Fatal("denied")
			}
		}
		r, err := tb.AllowNAt("new", now, 1)
		if err != ErrFull || r.OK || r.RetryAfter <= 0 {
			t.Fatalf("got %+v %v, want ErrFull", r, err)
		}
		if r, err := tb.AllowNAt("new", now+int64(r.RetryAfter)-1, 1); err != ErrFull || r.OK {
			t.Fatalf("before RetryAfter: %+v %v", r, err)
		}
		if r, err := tb.AllowNAt("new", now+int64(r.RetryAfter), 1); err != nil || !r.OK {
			t.Fatalf("at RetryAfter: %+v %v", r, err)
		}
		if s := tb.Stats(); s.Refusals != 2 || tb.reuses.Load() != 1 || s.Keys != 4 || s.Evictions != 0 {
			t.Fatalf("%+v", s)
		}
	})
}

// TestEndsOfTime: at each end of int64 time, four keys that take their
// whole burst fill four slots (WithRefuse keeps a fifth out) and get nothing
// more at that time; each decision is its own limiter's.
func TestEndsOfTime(t *testing.T) {
	kinds(t, func(t *testing.T, mk func(...Option) *Table) {
		for _, now := range []int64{math.MinInt64, math.MinInt64 + 1, -1, 0, math.MaxInt64 - 1, math.MaxInt64} {
			tb := mk(WithCapacity(4), WithRefuse())
			m := newOwn(tb)
			for i := range 4 {
				key := fmt.Sprint(i)
				got, err := tb.AllowNAt(key, now, tb.burst())
				want, _ := m.step(key, now, tb.burst())
				if got != want || err != nil {
					t.Fatalf("at %d: key %d got %+v %v, its own limiter %+v", now, i, got, err, want)
				}
			}
			if _, _, ok := tb.find("0"); !ok {
				t.Fatalf("at %d: a key denied at the end of time holds no slot", now)
			}
			for i := range 4 {
				if tb.AllowAt(fmt.Sprint(i), now) {
					t.Fatalf("at %d: key %d admitted beyond its burst", now, i)
				}
			}
		}
	})
}

// TestRetryAfterAtTheEndsOfTime: a key evicted owing a debt near the top
// of time, asking at the bottom, waits limit.Never, not a wrapped time.
func TestRetryAfterAtTheEndsOfTime(t *testing.T) {
	kinds(t, func(t *testing.T, mk func(...Option) *Table) {
		tb := mk(WithCapacity(4))
		top := int64(math.MaxInt64 - int64(time.Second))
		for i := range 4 {
			if r, _ := tb.AllowNAt(fmt.Sprint(i), top, tb.burst()); !r.OK {
				t.Fatal("denied")
			}
		}
		tb.AllowAt("evictor", top)
		var evicted string
		for i := range 4 {
			if _, _, ok := tb.find(fmt.Sprint(i)); !ok {
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
	to4 := netip.MustParseAddr("2002:c000:201::1") // 6to4: keyed as its IPv4 address
	i := 0
	allocs := testing.AllocsPerRun(1000, func() {
		i++
		now := int64(i) * 1000
		tb.AllowAt(keys[i%len(keys)], now) // new keys, evictions
		tb.AllowBytesAt(b, now)
		tb.AllowUint64At(uint64(i), now)
		tb.AllowAddrAt(addr, now)
		tb.AllowAddrAt(to4, now)
		tb.AllowNAt(keys[i%7], now, 2)
		tb.TakeAddrAt(addr, now, 1)
		tb.Allow(keys[i%13])
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per run", allocs)
	}
}

func TestClock(t *testing.T) {
	now := int64(1 << 40)
	tb := newBucketTable(t, WithClock(func() int64 { return now }))
	a := netip.MustParseAddr("10.0.0.1")
	for range tBurst {
		if !tb.Allow("k") || !tb.AllowBytes([]byte("b")) || !tb.AllowUint64(1) || !tb.AllowAddr(a) {
			t.Fatal("denied within the burst")
		}
	}
	if tb.Allow("k") || tb.AllowBytes([]byte("b")) || tb.AllowUint64(1) || tb.AllowAddr(a) {
		t.Fatal("admitted beyond the burst")
	}
	if r, _ := tb.AllowN("k", 1); r.OK {
		t.Fatal("AllowN admitted beyond the burst")
	}
	now += tok
	if r, err := tb.AllowN("k", 1); !r.OK || err != nil {
		t.Fatal("no refill on the clock")
	}
	if !tb.AllowBytes([]byte("b")) || !tb.AllowUint64(1) || !tb.AllowAddr(a) {
		t.Fatal("no refill on the clock")
	}
}

// TestFill: busy keys (none idle) placed into a table of 5/4 slots a key:
// how many find both groups full. Logged.
func TestFill(t *testing.T) {
	n := 200000
	if testing.Short() || race.Enabled {
		n = 20000
	}
	tb := newBucketTable(t, WithCapacity(n*5/4), WithRefuse())
	const now = 1 << 40
	refused := 0
	for i := range n {
		if _, err := tb.AllowNAt(fmt.Sprint(i), now, 1); err == ErrFull {
			refused++
		}
	}
	s := tb.Stats()
	t.Logf("%d busy keys in %d slots: %d refused (%.3g), %d placed", n, tb.capacity(), refused, float64(refused)/float64(n), s.Keys)
	if s.Keys+int64(refused) != int64(n) {
		t.Fatalf("%+v", s)
	}
}

// TestSecondGroup: at 90% fill with busy keys, the table refuses about as
// many keys as two-choice placement into groups drawn independently at
// random does: a second group that is not independent of the first (the
// next one, or the same) refuses several times more.
func TestSecondGroup(t *testing.T) {
	slots := 1 << 16
	if race.Enabled {
		slots = 1 << 14
	}
	n := slots * 9 / 10
	tb := newBucketTable(t, WithCapacity(slots), WithRefuse())
	const now = 1 << 40
	refused := 0
	for i := range n {
		if _, err := tb.AllowNAt(fmt.Sprint("fill", i), now, 1); err == ErrFull {
			refused++
		}
	}
	// The same placement with independent random groups: the emptier of
	// two, refused when both are full.
	r := rand.New(rand.NewPCG(9, 9))
	fill := make([]int, slots/groupSlots)
	model := 0
	for range n {
		a, b := r.IntN(len(fill)), r.IntN(len(fill))
		if fill[b] < fill[a] {
			a = b
		}
		if fill[a] == groupSlots {
			model++
			continue
		}
		fill[a]++
	}
	t.Logf("90%% fill: table refused %d, independent placement %d", refused, model)
	if float64(refused) > 1.5*float64(model)+20 || float64(refused) < 0.5*float64(model)-20 {
		t.Fatalf("table refused %d, independent placement %d", refused, model)
	}
}

// TestZeroTable: the zero Table denies every request and refuses with
// ErrFull; nothing panics.
func TestZeroTable(t *testing.T) {
	var tb Table
	a := netip.MustParseAddr("192.0.2.1")
	if tb.Allow("k") || tb.AllowAt("k", 0) || tb.AllowBytes(nil) || tb.AllowBytesAt(nil, 0) ||
		tb.AllowUint64(1) || tb.AllowUint64At(1, 0) || tb.AllowAddr(a) || tb.AllowAddrAt(a, 0) {
		t.Fatal("the zero Table admitted")
	}
	for _, f := range []func() (limit.Result, error){
		func() (limit.Result, error) { return tb.AllowN("k", 1) },
		func() (limit.Result, error) { return tb.AllowNAt("k", 0, 0) },
		func() (limit.Result, error) { r, _, err := tb.TakeAt("k", 0, 1); return r, err },
		func() (limit.Result, error) { r, _, err := tb.TakeAddrAt(a, 0, 1); return r, err },
	} {
		if r, err := f(); r.OK || r.RetryAfter != limit.Never || !errors.Is(err, ErrFull) {
			t.Fatalf("got %+v %v, want a denial with ErrFull", r, err)
		}
	}
	if r, c, s := tb.RemainingAt("k", 0), tb.capacity(), tb.Stats(); r != 0 || c != 0 || s != (Stats{}) {
		t.Fatalf("the zero Table: Remaining %d, Capacity %d, %+v", r, c, s)
	}
	tb.Refund(limit.Receipt{N: 1})
}

// TestNoCopy: a Table holds a value with pointer Lock and Unlock methods,
// which go vet's copylocks check reports copies of.
func TestNoCopy(t *testing.T) {
	f, ok := reflect.TypeFor[Table]().FieldByName("_")
	if !ok {
		t.Fatal("no marker field")
	}
	pt := reflect.PointerTo(f.Type)
	if _, ok := pt.MethodByName("Lock"); !ok {
		t.Fatal("the marker has no Lock")
	}
	if _, ok := pt.MethodByName("Unlock"); !ok {
		t.Fatal("the marker has no Unlock")
	}
}

// TestFreshKeysNeverDenied: goroutines deciding on keys never seen
// before, through the plain forms, while the keys that owed something in
// the last 10ms fill under half the table, are never denied, and the
// table reuses idle slots all along. Each key owes one token for 1ms (a
// window's count, up to 2ms); the clock stands still while the goroutines
// decide a round of keys and moves on between rounds, so how many keys
// owe something at once is counted, whatever the machine's speed or load.
func TestFreshKeysNeverDenied(t *testing.T) {
	const (
		gs    = 4                      // a round: gs goroutines deciding perG keys each
		step  = 500 * time.Microsecond // the clock's move between rounds
		owing = 13 * time.Millisecond  // grace, a debt of at most 2ms, and a step
	)
	slots, perG := 1<<16, 256
	if race.Enabled {
		slots, perG = 1<<13, 32
	}
	// Keys not yet idle at a round's time, at most: about 40% of the slots.
	if busy := gs * perG * int(owing/step); busy > slots/2 {
		t.Fatalf("%d busy keys, over half of %d slots", busy, slots)
	}
	rounds := 400
	if testing.Short() || race.Enabled {
		rounds = 2 * slots / (gs * perG) // the table filled twice over
	}
	mks := map[string]func(nanotime.Clock) (*Table, error){
		"bucket": func(c nanotime.Clock) (*Table, error) {
			return New(1, time.Millisecond, 1, WithCapacity(slots), WithClock(c))
		},
		"window": func(c nanotime.Clock) (*Table, error) {
			return NewWindow(1, time.Millisecond, WithCapacity(slots), WithClock(c))
		},
	}
	for name, mk := range mks {
		t.Run(name, func(t *testing.T) {
			var now atomic.Int64
			now.Store(1 << 40)
			tb, err := mk(now.Load)
			if err != nil {
				t.Fatal(err)
			}
			var denied atomic.Int64
			for round := range rounds {
				var wg sync.WaitGroup
				for g := range gs {
					wg.Go(func() {
						var key [16]byte
						binary.LittleEndian.PutUint64(key[8:], uint64(round*gs+g))
						for i := range perG {
							binary.LittleEndian.PutUint64(key[:8], uint64(i))
							if !tb.AllowBytes(key[:]) {
								denied.Add(1)
							}
						}
					})
				}
				wg.Wait()
				now.Add(int64(step))
			}
			s := tb.Stats()
			decided := int64(rounds * gs * perG)
			t.Logf("%d fresh keys, %d denied; %+v, %d reuses", decided, denied.Load(), s, tb.reuses.Load())
			if denied.Load() != 0 {
				t.Fatalf("%d of %d fresh keys denied", denied.Load(), decided)
			}
			if tb.reuses.Load() == 0 {
				t.Fatal("no idle slot was reused")
			}
		})
	}
}
