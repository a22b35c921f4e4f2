package redis

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/cellrate/cellrate/redis/internal/redistest"
)

// hammer runs procs TwoTier limiters, each on its own client (its own
// connections), with g goroutines each, on one key for d, and returns every
// admission (at the monotonic time it counts at) and the limiters.
func hammer(t *testing.T, s *redistest.Server, procs, g int, d time.Duration, mk func(c Client) (*TwoTier, error)) ([]admission, []*TwoTier) {
	var mu sync.Mutex
	var adm []admission
	var tts []*TwoTier
	var wg sync.WaitGroup
	stop := time.Now().Add(d)
	var errs atomic.Int64
	for range procs {
		o := s.Options()
		o.PoolSize = g
		c := goredis.NewClient(o)
		t.Cleanup(func() { c.Close() })
		tt, err := mk(c)
		if err != nil {
			t.Fatal(err)
		}
		tts = append(tts, tt)
		for range g {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var mine []admission
				for time.Now().Before(stop) {
					from := monotonic()
					r, at, err := tt.allow(context.Background(), "k", 1)
					if err != nil {
						errs.Add(1)
					}
					if r.OK {
						mine = append(mine, admission{at: at, n: 1, from: from})
					}
				}
				mu.Lock()
				adm = append(adm, mine...)
				mu.Unlock()
			}()
		}
	}
	wg.Wait()
	if n := errs.Load(); n != 0 {
		t.Fatalf("%d errors", n)
	}
	return adm, tts
}

// TestTwoTierBound runs four processes (separate clients and connections)
// of four goroutines each on one key of one server, for a second and a
// half, and checks that the admissions of all of them, at the times they
// count at, keep burst + events*T/period over every interval, exactly;
// and reports what batching cost against that bound.
func TestTwoTierBound(t *testing.T) {
	t.Parallel() // sleeps; keys in a database of its own
	s := redistest.Shared(t)
	const events, burst = 2000, 300
	period := time.Second
	d := 1500 * time.Millisecond
	if testing.Short() {
		d = 250 * time.Millisecond // 12 leases
	}
	for _, batch := range []int64{1, 10, 50} {
		prefix := "tt" + string(rune('a'+batch%26))
		adm, tts := hammer(t, s, 4, 4, d, func(c Client) (*TwoTier, error) {
			return NewTwoTier(c, prefix, events, period, burst, WithBatch(batch), WithLease(20*time.Millisecond), WithTimeout(5*time.Second))
		})
		checkBound(t, adm, func(sum, span int64) bool {
			return sum*int64(period) > burst*int64(period)+events*span
		})
		var trips int64
		for _, tt := range tts {
			trips += tt.Stats().RoundTrips
		}
		first, last := adm[0].at, adm[0].at
		for _, a := range adm {
			first, last = min(first, a.at), max(last, a.at)
		}
		bound := float64(burst) + float64(events)*float64(last-first)/float64(period)
		t.Logf("batch %d (Redis burst %d): %d admitted, %.1f%% of the bound over their span, %d round trips",
			batch, tts[0].redisBurst(), len(adm), 100*float64(len(adm))/bound, trips)
	}
}

// TestTwoTierLeaseEnds holds borrowed units in one process past its lease
// while another drains and the bucket refills: the held units must be void,
// or the two together would pass the bound.
func TestTwoTierLeaseEnds(t *testing.T) {
	t.Parallel() // sleeps; keys in a database of its own
	s := redistest.Shared(t)
	mk := func() *TwoTier {
		c := goredis.NewClient(s.Options())
		t.Cleanup(func() { c.Close() })
		tt, err := NewTwoTier(c, "le", 100, time.Second, 80, WithBatch(40), WithLease(300*time.Millisecond), WithTimeout(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		return tt
	}
	a, b := mk(), mk()
	var adm []admission
	take := func(tt *TwoTier, max int) int {
		got := 0
		for range max {
			r, at, err := tt.allow(bg, "k", 1)
			if err != nil {
				t.Fatal(err)
			}
			if !r.OK {
				break
			}
			adm = append(adm, admission{at: at, n: 1})
			got++
		}
		return got
	}
	if take(a, 1) != 1 { // a borrows 40 of the Redis burst 50, holds 39
		t.Fatal("a: no first unit")
	}
	take(b, 1000)           // b drains the rest
	time.Sleep(time.Second) // a's lease ends; the bucket refills
	take(b, 1000)
	trips := a.Stats().RoundTrips
	take(a, 1)
	if a.Stats().RoundTrips == trips {
		t.Fatal("a spent units past their lease without asking Redis")
	}
	take(a, 1000)
	checkBound(t, adm, func(sum, span int64) bool { return sum*1e9 > 80*1e9+100*span })
}

// TestTwoTierSweep: the entries of idle keys leave the process.
func TestTwoTierSweep(t *testing.T) {
	t.Parallel() // sleeps; keys in a database of its own
	_, c := server(t)
	tt, err := NewTwoTier(c, "sw", 1000, time.Second, 100, WithBatch(1), WithLease(10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	count := func() (n int) {
		tt.entries.Range(func(any, any) bool { n++; return true })
		return n
	}
	for i := range 500 {
		tt.Allow(bg, "k"+string(rune('a'+i%26))+string(rune('a'+i/26%26)))
	}
	if n := count(); n != 500 {
		t.Fatalf("%d entries after 500 keys", n)
	}
	time.Sleep(20 * time.Millisecond) // the leases end
	tt.Allow(bg, "hot")
	tt.sweep(monotonic())
	if n := count(); n > 1 {
		t.Fatalf("%d entries left after a sweep", n)
	}
	// The round trips call it.
	for i := range 600 {
		tt.Allow(bg, "k"+string(rune('a'+i%26))+string(rune('a'+i/26%26)))
	}
	time.Sleep(1100 * time.Millisecond)
	for i := 0; tt.Stats().RoundTrips < 2*sweepEvery; i++ {
		tt.Allow(bg, "j"+strconv.Itoa(i))
	}
	left := 0
	tt.entries.Range(func(k, _ any) bool {
		if k.(string)[0] == 'k' {
			left++
		}
		return true
	})
	if left != 0 {
		t.Fatalf("%d idle entries left after %d round trips", left, tt.Stats().RoundTrips)
	}
}

// TestTwoTierGivesBack: units a process borrowed and left unspent past
// their lease go back to Redis with its next borrow, when nothing was
// admitted on the key since; another process can then take them. Every
// unit of the Redis burst is then spent, held live, or left for others.
func TestTwoTierGivesBack(t *testing.T) {
	t.Parallel() // sleeps; keys in a database of its own
	s := redistest.Shared(t)
	a, b := giveBackPair(t, s, "gb")
	spend(t, a, 20) // a's borrows grow to 40 units
	held := a.pool("k")
	if held == 0 {
		t.Fatal("a holds nothing after spending fast: its borrows did not grow")
	}
	time.Sleep(210 * time.Millisecond)
	spend(t, a, 1) // gives back what it held, borrows again, spends 1
	got := spend(t, b, 1000)
	// 1 per 10 minutes: nothing refills. Redis burst 99.
	if want := 99 - 21 - a.pool("k"); got != want {
		t.Fatalf("b got %d, want %d (a held %d, now %d)", got, want, held, a.pool("k"))
	}
	// a's last borrow was not the last write (b borrowed since): its
	// unspent units cannot go back, and do not.
	time.Sleep(210 * time.Millisecond)
	if ok, _ := a.Allow(bg, "k"); ok {
		t.Fatal("a admitted from a key b emptied")
	}
}

// TestTwoTierClose: Close gives back the units of a live lease, so another
// process gets every unit the closed one did not spend; the closed one
// then denies with ErrClosed.
func TestTwoTierClose(t *testing.T) {
	s := redistest.Shared(t)
	a, b := giveBackPair(t, s, "cl")
	spend(t, a, 20)
	if a.pool("k") == 0 {
		t.Fatal("a holds nothing")
	}
	if err := a.Close(bg); err != nil {
		t.Fatal(err)
	}
	if got := spend(t, b, 1000); got != 99-20 {
		t.Fatalf("b got %d after a closed, want %d", got, 99-20)
	}
	if ok, err := a.Allow(bg, "k"); ok || !errors.Is(err, ErrClosed) {
		t.Fatalf("closed: %v %v", ok, err)
	}
}

// giveBackPair returns two processes' TwoTiers at 1 per 10 minutes (no
// refill during a test), burst 100 (Redis burst 99), borrows of up to 40,
// leases of 200ms.
func giveBackPair(t *testing.T, s *redistest.Server, prefix string) (a, b *TwoTier) {
	mk := func() *TwoTier {
		c := goredis.NewClient(s.Options())
		t.Cleanup(func() { c.Close() })
		if err := c.Ping(bg).Err(); err != nil { // dialled: a first round trip within the lease
			t.Fatal(err)
		}
		tt, err := NewTwoTier(c, prefix, 1, 10*time.Minute, 100, WithBatch(40), WithLease(200*time.Millisecond), WithTimeout(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		return tt
	}
	return mk(), mk()
}

// spend takes single units for "k" until one is denied or max are taken.
func spend(t *testing.T, tt *TwoTier, max int64) int64 {
	t.Helper()
	var got int64
	for got < max {
		ok, err := tt.Allow(bg, "k")
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		got++
	}
	return got
}

// pool returns the units this process holds for key.
func (t *TwoTier) pool(key string) int64 { return int64(t.entry(key).word.Load() & tokMask) }

// TestTwoTierReserves: a process that empties the key reserves the next
// units with one round trip and admits each only once its time has come:
// denied without a round trip before, admitted without one after, also
// while Redis is down.
func TestTwoTierReserves(t *testing.T) {
	t.Parallel() // sleeps; a server of its own
	s := redistest.Start(t)
	c := faultClient(t, s.Addr)
	t.Cleanup(func() { c.Close() })
	// 2/s, burst 20: a lease of 2.5s, a Redis burst of 15, reservations of
	// 2 (half a lease's refill), a unit every 500ms.
	tt, err := NewTwoTier(c, "rv", 2, time.Second, 20, WithTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	// The denial that ends the spending is the borrow that reserves.
	if got := spend(t, tt, 100); got != tt.redisBurst() {
		t.Fatalf("spent %d of a Redis burst of %d", got, tt.redisBurst())
	}
	trips := tt.Stats().RoundTrips
	r, err := tt.AllowN(bg, "k", 1)
	if err != nil || r.OK || r.RetryAfter <= 0 || r.RetryAfter > 500*time.Millisecond {
		t.Fatalf("after a borrow of the empty key: %+v %v", r, err)
	}
	// Reserved units are borrowed: they are spent while Redis is down and
	// its node is not asked (as after three failures in a row).
	s.Kill()
	tt.nodes.def.downUntil.Store(monotonic() + int64(time.Hour))
	if _, err := tt.Allow(bg, "other"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Redis down: %v, want ErrUnavailable", err)
	}
	for i := range 2 {
		if ok, _ := tt.Allow(bg, "k"); ok {
			t.Fatalf("unit %d admitted before its time", i)
		}
		time.Sleep(r.RetryAfter)
		if ok, err := tt.Allow(bg, "k"); !ok || err != nil {
			t.Fatalf("reserved unit %d not admitted at its time: %v", i, err)
		}
		r, _ = tt.AllowN(bg, "k", 1)
		if r.OK || (i == 0 && r.RetryAfter > 500*time.Millisecond) {
			t.Fatalf("after reserved unit %d: %+v", i, r)
		}
	}
	if got := tt.Stats().RoundTrips - trips; got != 0 {
		t.Fatalf("%d round trips to spend a reservation", got)
	}
}

// TestTwoTierLineShort: processes that spend the burst fast (their
// borrows grow) and then find the key empty reserve at most half a lease's
// refill each (at least 2), not what they last borrowed: the line of
// reservations behind the empty bucket stays that short.
func TestTwoTierLineShort(t *testing.T) {
	t.Parallel() // sleeps; keys in a database of its own
	s, c := server(t)
	const procs, events = 2, 2
	adm, tts := hammer(t, s, procs, 2, 300*time.Millisecond, func(c Client) (*TwoTier, error) {
		return NewTwoTier(c, "ls", events, time.Second, 50, WithTimeout(5*time.Second))
	})
	checkBound(t, adm, func(sum, span int64) bool { return sum*1e9 > 50*1e9+events*span })
	tt := tts[0]
	line := c.PTTL(bg, tt.r.keyOf("k")).Val() // the TAT less now: full again then
	res := max(2, tt.rate.Load().half)
	if most := time.Duration(tt.redisBurst()+procs*res+1) * time.Second / events; line > most {
		t.Fatalf("the key is full again in %v, over an empty bucket and %d reservations of %d (%v)", line, procs, res, most)
	}
}
