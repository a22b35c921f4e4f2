package redis

import (
	"errors"
	"slices"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/cellrate/cellrate/adaptive"
	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/redis/internal/redistest"
)

var _ adaptive.Setter = (*TwoTier)(nil) // an AIMD drives a TwoTier

// checkRates fails t if the units admitted at times in some closed interval
// [a, b] exceed burst plus the integral over it of r1 events per second
// before at and r2 after, exactly.
func checkRates(t *testing.T, adm []admission, burst, r1, at, r2 int64) {
	t.Helper()
	slices.SortStableFunc(adm, func(x, y admission) int {
		return int(min(1, max(-1, x.at-y.at)))
	})
	integral := func(a, b int64) int64 { // in units*1e9
		return r1*(min(b, at)-min(a, at)) + r2*(max(b, at)-max(a, at))
	}
	for i := range adm {
		sum := int64(0)
		for j := i; j < len(adm); j++ {
			sum += adm[j].n
			if j+1 < len(adm) && adm[j+1].at == adm[j].at {
				continue
			}
			if sum*1e9 > burst*1e9+integral(adm[i].at, adm[j].at) {
				t.Fatalf("%d units admitted at times in [%d, %d] (span %v, the change at %d): over burst %d plus %d/s, then %d/s",
					sum, adm[i].at, adm[j].at, time.Duration(adm[j].at-adm[i].at), at, burst, r1, r2)
			}
		}
	}
}

// tierPair makes two processes (separate clients) of one TwoTier.
func tierPair(t *testing.T, s *redistest.Server, prefix string, events, burst int64, opts ...Option) (a, b *TwoTier) {
	mk := func() *TwoTier {
		c := goredis.NewClient(&goredis.Options{Addr: s.Addr})
		t.Cleanup(func() { c.Close() })
		tt, err := NewTwoTier(c, prefix, events, time.Second, burst, append(opts, WithTimeout(5*time.Second))...)
		if err != nil {
			t.Fatal(err)
		}
		return tt
	}
	return mk(), mk()
}

// take admits up to max units of one on key "k" (stopping at the first
// denial) and appends each to adm at the time it counts at.
func take(t *testing.T, tt *TwoTier, max int, adm *[]admission) int {
	t.Helper()
	got := 0
	for range max {
		r, at, err := tt.allow(bg, "k", 1)
		if err != nil {
			t.Fatal(err)
		}
		if !r.OK {
			break
		}
		*adm = append(*adm, admission{at: at, n: 1})
		got++
	}
	return got
}

// TestTwoTierSetRateFaster: a process holds units borrowed under a lease of
// a second at 100/s when the rate rises tenfold; another converts the key,
// which refills its Redis burst in 0.3s at the new rate. Half a second
// later the other takes that burst, then the holder spends what it can.
// Units still spent under the old lease would pass burst + the rate's
// integral (the Redis burst of 300 and the holder's 169 against 400): the
// change must cut their lease.
func TestTwoTierSetRateFaster(t *testing.T) {
	t.Parallel() // sleeps; a server of its own
	s := redistest.Start(t)
	// burst 400 at 100/s: lease 1s, keep 100, Redis burst 300.
	a, b := tierPair(t, s, "srf", 100, 400, WithBatch(300))
	if a.redisBurst() != 300 || a.rate.Load().lease != int64(time.Second) {
		t.Fatalf("Redis burst %d, lease %v", a.redisBurst(), time.Duration(a.rate.Load().lease))
	}
	var adm []admission
	if r, at, err := a.allow(bg, "k", 130); err != nil || !r.OK {
		t.Fatal(r, err)
	} else {
		adm = append(adm, admission{at: at, n: 130})
	}
	if take(t, a, 1, &adm) != 1 { // borrows 260 or what is left, 170
		t.Fatal("a: no unit after its first borrow")
	}
	if held := a.pool("k"); held < 150 {
		t.Fatalf("a holds %d units, want the 169 left of its second borrow", held)
	}
	change := monotonic()
	for _, tt := range []*TwoTier{a, b} {
		if err := tt.SetRate(1000, time.Second); err != nil {
			t.Fatal(err)
		}
	}
	if got := a.rate.Load().lease; got != int64(100*time.Millisecond) {
		t.Fatalf("lease at 1000/s: %v, want 100ms", time.Duration(got))
	}
	take(t, b, 1, &adm) // converts the key: empty, full again in 0.3s
	time.Sleep(500 * time.Millisecond)
	r, at, err := b.allow(bg, "k", 300)
	if err != nil || !r.OK {
		t.Fatalf("b could not take the Redis burst refilled at the new rate: %+v %v", r, err)
	}
	adm = append(adm, admission{at: at, n: 300})
	held := take(t, a, 1000, &adm)
	t.Logf("after the change b took 300, then a %d", held)
	checkRates(t, adm, 400, 100, change, 1000)
	// The new rate is in force: a second saturated admits more than the
	// old rate's bound could.
	start := len(adm)
	stop := time.Now().Add(time.Second)
	for time.Now().Before(stop) {
		take(t, a, 1000, &adm)
		take(t, b, 1000, &adm)
	}
	if n := len(adm) - start; n <= 400+100 {
		t.Fatalf("%d admitted in a second at 1000/s, at most the old rate's bound", n)
	}
	checkRates(t, adm, 400, 100, change, 1000)
}

// TestTwoTierSetRateSlower: two processes spend below 1000/s (the key
// stays nearly full), then the rate drops tenfold and both saturate the
// key for a second and a half (0.8s with -short): from the first borrow after the change,
// the admissions must follow 100/s (a limiter still borrowing at the old
// rate admits about 1500 more).
func TestTwoTierSetRateSlower(t *testing.T) {
	t.Parallel() // sleeps; a server of its own
	s := redistest.Start(t)
	// burst 400 at 1000/s: lease 100ms, keep 100, Redis burst 300.
	a, b := tierPair(t, s, "srs", 1000, 400)
	var adm []admission
	stop := time.Now().Add(300 * time.Millisecond)
	for time.Now().Before(stop) {
		take(t, a, 1, &adm)
		take(t, b, 1, &adm)
		time.Sleep(4 * time.Millisecond)
	}
	for _, tt := range []*TwoTier{a, b} {
		if err := tt.SetRateAt(0, 100); err != nil {
			t.Fatal(err)
		}
	}
	if rt := a.rate.Load(); rt.events != 100 || rt.period != time.Second || rt.lease != int64(100*time.Millisecond) {
		t.Fatalf("SetRateAt(100): %d per %v, lease %v", rt.events, rt.period, time.Duration(rt.lease))
	}
	// Each process's next round trip converts the key; until the last of
	// them returns, count the old rate.
	trips := []int64{a.Stats().RoundTrips, b.Stats().RoundTrips}
	for i, tt := range []*TwoTier{a, b} {
		for tt.Stats().RoundTrips == trips[i] {
			take(t, tt, 1, &adm)
			time.Sleep(time.Millisecond)
		}
	}
	converted := monotonic()
	before := len(adm)
	d := 1500 * time.Millisecond
	if testing.Short() {
		d = 800 * time.Millisecond
	}
	stop = time.Now().Add(d)
	for time.Now().Before(stop) {
		take(t, a, 1000, &adm)
		take(t, b, 1000, &adm)
	}
	t.Logf("%d admitted before the change took, %d in the %v after", before, len(adm)-before, d)
	checkRates(t, adm, 400, 1000, converted, 100)
}

// TestTwoTierSetRateParams: SetRate refuses what NewTwoTier would, and a
// rate that refills more than burst - Redis burst in 1ms, with a
// ParamError; the zero value refuses with its error; SetRateAt reads a
// rate a second.
func TestTwoTierSetRateParams(t *testing.T) {
	tt, err := NewTwoTier(offline, "p", 100, time.Second, 400)
	if err != nil {
		t.Fatal(err)
	}
	if rt := tt.rate.Load(); rt.lease != int64(time.Second) || rt.half != 50 {
		t.Fatalf("NewTwoTier at 100/s: lease %v, half a lease %d units, want 1s and 50", time.Duration(rt.lease), rt.half)
	}
	for _, tc := range []struct {
		events int64
		per    time.Duration
	}{{0, time.Second}, {1, 0}, {2, 1}, {100_001, time.Second}} {
		var pe *limit.ParamError
		if err := tt.SetRate(tc.events, tc.per); !errors.As(err, &pe) {
			t.Errorf("SetRate(%d, %v) = %v, want a ParamError", tc.events, tc.per, err)
		}
	}
	if err := tt.SetRate(100_000, time.Second); err != nil { // keep 100 in exactly 1ms
		t.Fatal(err)
	}
	if err := tt.SetRateAt(0, 2.5); err != nil {
		t.Fatal(err)
	}
	// A reservation holds what the rate refills in half a lease: 1 unit at
	// 5 per 2s with a 1s lease.
	if rt := tt.rate.Load(); rt.events != 5 || rt.period != 2*time.Second || rt.lease != int64(time.Second) || rt.half != 1 {
		t.Fatalf("SetRateAt(2.5): %d per %v, lease %v, half a lease %d units", rt.events, rt.period, time.Duration(rt.lease), rt.half)
	}
	var zt *TwoTier
	if err := zt.SetRate(1, time.Second); !errors.Is(err, ErrClosed) {
		t.Error(err)
	}
	if err := (&TwoTier{}).SetRateAt(0, 1); !errors.Is(err, ErrClosed) {
		t.Error(err)
	}
}

// TestTwoTierSetRateFailOpen: while Redis is down (nothing listens), a
// TwoTier failing open admits on its local limit, which follows SetRate:
// after a cut from 100/s to 10/s its admissions keep the local burst plus
// 10/s, not 100/s.
func TestTwoTierSetRateFailOpen(t *testing.T) {
	t.Parallel() // sleeps; no server
	tt, err := NewTwoTier(faultClient(t, "127.0.0.1:1"), "fo", 100, time.Second, 40, WithFailOpen(1), WithTimeout(faultTimeout))
	if err != nil {
		t.Fatal(err)
	}
	var adm []admission
	run := func(d time.Duration) {
		for stop := time.Now().Add(d); time.Now().Before(stop); {
			r, at, err := tt.allow(bg, "k", 1)
			if err != nil {
				t.Fatalf("failing open: %v", err)
			}
			if r.OK {
				adm = append(adm, admission{at: at, n: 1})
			}
			time.Sleep(time.Millisecond)
		}
	}
	run(500 * time.Millisecond)
	if tt.Stats().Fallbacks == 0 {
		t.Fatal("no decision on the local limit")
	}
	if err := tt.SetRate(10, time.Second); err != nil {
		t.Fatal(err)
	}
	change := monotonic() // the local limit changed before: count 100/s until now
	after := len(adm)
	run(600 * time.Millisecond)
	t.Logf("%d admitted at 100/s, %d in 0.6s after the cut", after, len(adm)-after)
	checkRates(t, adm, 40, 100, change, 10)
}

// TestTwoTierSetRateDuringBorrow: a borrow in flight (the server stopped)
// when the rate rises tenfold brings its units back after SetRate passed
// the key: their lease must be cut all the same, to about the new lease,
// not left at the old second.
func TestTwoTierSetRateDuringBorrow(t *testing.T) {
	s := redistest.Start(t)
	c := goredis.NewClient(&goredis.Options{Addr: s.Addr})
	t.Cleanup(func() { c.Close() })
	// burst 400 at 100/s: lease 1s, Redis burst 300.
	tt, err := NewTwoTier(c, "sdb", 100, time.Second, 400, WithBatch(300), WithTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if r, _, err := tt.allow(bg, "k", 130); err != nil || !r.OK {
		t.Fatal(r, err)
	}
	s.Stop()
	done := make(chan error, 1)
	go func() { // borrows 170, the rest of the Redis burst, and spends 1
		r, _, err := tt.allow(bg, "k", 1)
		if err == nil && !r.OK {
			err = errors.New("denied")
		}
		done <- err
	}()
	time.Sleep(50 * time.Millisecond) // the request is sent
	if err := tt.SetRate(1000, time.Second); err != nil {
		t.Fatal(err)
	}
	s.Continue()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	w := tt.entry("k").word.Load()
	left := time.Duration(int64(w>>tokBits)*1e6 - monotonic())
	t.Logf("%d units held, their lease ends in %v", w&tokMask, left)
	if w&tokMask < 150 || left > 300*time.Millisecond {
		t.Fatalf("%d units held for %v more: the lease of a borrow that straddled SetRate was not cut (new lease 100ms)", w&tokMask, left)
	}
}

// TestTwoTierSetRateVoidsReservation: units reserved at the old rate and
// not yet there when the rate changes are never spent: the next request
// after their time asks Redis instead.
func TestTwoTierSetRateVoidsReservation(t *testing.T) {
	_, c := server(t)
	// burst 400 at 100/s: lease 1s, Redis burst 300, half a lease's refill 50.
	tt, err := NewTwoTier(c, "svr", 100, time.Second, 400, WithTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if r, _, err := tt.allow(bg, "k", 300); err != nil || !r.OK {
		t.Fatal(r, err)
	}
	if r, _, err := tt.allow(bg, "k", 1); err != nil || r.OK { // the key is empty: reserves
		t.Fatal(r, err)
	}
	e := tt.entry("k")
	e.mu.Lock()
	reserved := e.res.n
	e.mu.Unlock()
	if reserved < 2 {
		t.Fatalf("%d units reserved on an empty key", reserved)
	}
	if err := tt.SetRate(1000, time.Second); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // the first reserved units' times pass
	trips := tt.Stats().RoundTrips
	tt.allow(bg, "k", 1)
	if tt.Stats().RoundTrips == trips {
		t.Fatalf("a request after the change was served from the %d units reserved before it (pool %d)",
			reserved, e.word.Load()&tokMask)
	}
}
