package redis

import (
	"errors"
	"math"
	"math/big"
	"strconv"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/redis/internal/redistest"
)

// TestParamBounds: each constructor accepts the values at both ends of
// every range it documents and refuses the next one out with a
// *limit.ParamError naming the parameter and the range.
func TestParamBounds(t *testing.T) {
	const year = 365 * 24 * time.Hour
	gcra := func(ev int64, per time.Duration, b int64, o ...Option) error {
		_, err := NewGCRA(offline, "", ev, per, b, o...)
		return err
	}
	win := func(l int64, w time.Duration, o ...Option) error {
		_, err := NewWindow(offline, "", l, w, o...)
		return err
	}
	for _, tc := range []struct {
		name     string
		err      error
		param    string // "" = accepted
		min, max any
	}{
		{"grace 0", gcra(1, time.Second, 1, WithGrace(0)), "", nil, nil},
		{"grace a year", gcra(1, time.Second, 1, WithGrace(year)), "", nil, nil},
		{"grace a year and 1ns", gcra(1, time.Second, 1, WithGrace(year+1)), "grace", time.Duration(0), year},
		{"grace -1ns", win(1, time.Second, WithGrace(-1)), "grace", time.Duration(0), year},
		{"timeout 0", gcra(1, time.Second, 1, WithTimeout(0)), "", nil, nil},
		{"timeout -1ns", gcra(1, time.Second, 1, WithTimeout(-1)), "timeout", time.Duration(0), nil},
		{"window 1ns", win(1, 1), "", nil, nil},
		{"window 0", win(1, 0), "window", time.Duration(1), time.Duration(maxWindow)},
		{"window limit 1", win(1, time.Second), "", nil, nil},
		{"window limit 0", win(0, time.Second), "limit", int64(1), int64(1<<32 - 1)},
		{"gcra 1 per ns", gcra(1, 1, 1), "", nil, nil},
		{"gcra period 0", gcra(1, 0, 1), "period", time.Duration(1), nil},
		{"gcra events 0", gcra(0, 1, 1), "events", int64(1), nil},
		{"gcra burst 0", gcra(1, 1, 0), "burst", int64(1), nil},
		{"gcra 2 per ns", gcra(2, 1, 1), "events", int64(1), nil},
		// period 2^48-1 ns for 2 events: a step ratio of exactly 2^48-1.
		{"gcra step ratio 2^48-1", gcra(2, 1<<48-1, 1), "", nil, nil},
		{"gcra step ratio 2^48+1", gcra(2, 1<<48+1, 1), "period", nil, nil},
		// An interval of 3ns: a burst of (2^48-1)/3 spans 2^48-1 steps.
		{"gcra burst span 2^48-1", gcra(1, 3, (1<<48-1)/3), "", nil, nil},
		{"gcra burst span 2^48+2", gcra(1, 3, (1<<48-1)/3+1), "burst", int64(1), int64((1<<48 - 1) / 3)},
		// burst times the interval past 64 bits: 2^62 * 4 = 2^64.
		{"gcra burst span 2^64", gcra(1, 4, 1<<62), "burst", int64(1), int64((1<<48 - 1) / 4)},
	} {
		if tc.param == "" {
			if tc.err != nil {
				t.Errorf("%s: %v", tc.name, tc.err)
			}
			continue
		}
		var pe *paramErr
		if !errors.As(tc.err, &pe) || pe.Param != tc.param {
			t.Errorf("%s: %v, want a ParamError for %s", tc.name, tc.err, tc.param)
			continue
		}
		if pe.Min != tc.min || pe.Max != tc.max {
			t.Errorf("%s: range [%v, %v], want [%v, %v]", tc.name, pe.Min, pe.Max, tc.min, tc.max)
		}
	}
}

// TestGCRAParamsExact: the step ratio and the constants the script is
// given are the reduced ones: a step of p/e ns, an event of j steps, and
// 1e9 and 2^63 modulo p.
func TestGCRAParamsExact(t *testing.T) {
	for _, tc := range []struct {
		events int64
		period time.Duration
	}{{1, time.Second}, {3, time.Second}, {4, 6}, {2, 1<<48 - 1}, {7, 1<<47 + 5}, {1000, 999999}, {1, 1}} {
		gp, err := newGCRAParams(tc.events, tc.period, 1)
		if err != nil {
			t.Fatalf("%d per %v: %v", tc.events, tc.period, err)
		}
		// Reference: j = floor(period/events), p/e = period/(events*j)
		// reduced.
		per, ev := big.NewInt(int64(tc.period)), big.NewInt(tc.events)
		j := new(big.Int).Quo(per, ev)
		e := new(big.Int).Mul(ev, j)
		g := new(big.Int).GCD(nil, nil, per, e)
		p := new(big.Int).Quo(per, g).Uint64()
		want := gcraParams{p: p, e: new(big.Int).Quo(e, g).Uint64(), j: j.Uint64(), burst: 1, c1: 1e9 % p, c2: (1 << 63) % p}
		if gp != want {
			t.Errorf("%d per %v: %+v, want %+v", tc.events, tc.period, gp, want)
		}
	}
}

// TestGCRATATExact: gcraTAT is (origin + 2^63)*e/p + t exactly, and false
// when the origin is off the step grid or it or the result leaves
// [0, 2^64).
func TestGCRATATExact(t *testing.T) {
	two64 := new(big.Int).Lsh(big.NewInt(1), 64)
	for _, ps := range []gcraParams{{p: 1, e: 1}, {p: 3, e: 2}, {p: 1e9, e: 999999999}, {p: 7, e: 1 << 40}} {
		ref := func(os, ons, tt int64) (uint64, bool) {
			u := new(big.Int).Mul(big.NewInt(os), big.NewInt(1e9))
			u.Add(u, big.NewInt(ons)).Add(u, new(big.Int).Lsh(big.NewInt(1), 63)).Mod(u, two64)
			q, r := new(big.Int).QuoRem(u, new(big.Int).SetUint64(ps.p), new(big.Int))
			if r.Sign() != 0 {
				return 0, false
			}
			// The origin, as package gcra's time, must fit too.
			if q.Mul(q, new(big.Int).SetUint64(ps.e)).Cmp(two64) >= 0 {
				return 0, false
			}
			if q.Add(q, big.NewInt(tt)); q.Sign() < 0 || q.Cmp(two64) >= 0 {
				return 0, false
			}
			return q.Uint64(), true
		}
		// Origins on and off the grid (p divides u or not), near the
		// ends of time, and TATs at 0, +-1 and near the ends of uint64.
		var origins [][2]int64
		for _, base := range []int64{0, -1, 1, math.MinInt64 / int64(1e9), math.MaxInt64 / int64(1e9), -4611686018, 4611686017} {
			for ons := int64(0); ons < 9; ons++ {
				origins = append(origins, [2]int64{base, ons}, [2]int64{base, 999999999 - ons})
			}
		}
		for _, o := range origins {
			for _, tt := range []int64{0, 1, -1, 5, -5, math.MaxInt64, math.MinInt64, 1 << 62, -1 << 62} {
				got, gok := ps.gcraTAT(o[0], o[1], tt)
				want, wok := ref(o[0], o[1], tt)
				if gok != wok || got != want {
					t.Fatalf("p %d e %d: gcraTAT(%d, %d, %d) = %d %v, want %d %v", ps.p, ps.e, o[0], o[1], tt, got, gok, want, wok)
				}
			}
		}
	}
}

// TestGraceMs: a grace is kept in whole milliseconds, rounded up.
func TestGraceMs(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want int64
	}{{0, 0}, {1, 1}, {time.Millisecond - 1, 1}, {time.Millisecond, 1}, {time.Millisecond + 1, 2}, {1500 * time.Microsecond, 2}, {time.Hour, 3600000}} {
		if got := graceMs(tc.d); got != tc.want {
			t.Errorf("graceMs(%v) = %d, want %d", tc.d, got, tc.want)
		}
	}
}

// TestCheckBounds: the costs and times at the ends of their ranges reach
// Redis (here a closed port: an error from the dial, not a refusal), and
// the next ones out are refused without a round trip.
func TestCheckBounds(t *testing.T) {
	refused := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialerRetries: 1, DialerRetryTimeout: time.Nanosecond})
	defer refused.Close()
	g, err := NewGCRA(refused, "b", 1, time.Second, 3)
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWindow(refused, "b", 5, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	sent := func(r limit.Result, err error) bool {
		return err != nil && !errors.Is(err, errNegativeCost) && !errors.Is(err, errCostExceedsBurst) && !errors.Is(err, errTime) && !r.OK
	}
	for _, tc := range []struct {
		name   string
		l      *Limiter
		now, n int64
		caller bool
		want   error // nil: sent
	}{
		{"n 0", g, 0, 0, false, nil},
		{"n -1", g, 0, -1, false, errNegativeCost},
		{"gcra n burst", g, 0, 3, false, nil},
		{"gcra n burst+1", g, 0, 4, false, errCostExceedsBurst},
		{"window n limit", w, 0, 5, false, nil},
		{"window n limit+1", w, 0, 6, false, errCostExceedsBurst},
		{"now -2^62", g, -1 << 62, 1, true, nil},
		{"now -2^62-1", g, -1<<62 - 1, 1, true, errTime},
		{"now 2^62-1", g, 1<<62 - 1, 1, true, nil},
		{"now 2^62", g, 1 << 62, 1, true, errTime},
		{"server's time ignores now", g, 1 << 62, 1, false, nil},
	} {
		var r limit.Result
		var err error
		if tc.caller {
			r, err = tc.l.allowNAt(bg, "k", tc.now, tc.n)
		} else {
			r, err = tc.l.AllowN(bg, "k", tc.n)
		}
		if tc.want == nil && !sent(r, err) || tc.want != nil && (!errors.Is(err, tc.want) || r.OK || r.RetryAfter != limit.Never) {
			t.Errorf("%s: %+v %v, want %v", tc.name, r, err, tc.want)
		}
	}
}

// refusedClient is a client of a loopback port nothing listens on: every
// call fails at once with the dial's error, a Redis that is down.
func refusedClient(t *testing.T) *goredis.Client {
	c := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialerRetries: 1, DialerRetryTimeout: time.Nanosecond})
	t.Cleanup(func() { c.Close() })
	return c
}

// TestTwoTierDownClosed: against a Redis that is down, a TwoTier failing
// closed denies with the round trip's error three times, then for the
// retry span denies with ErrUnavailable without a round trip, its
// RetryAfter the rest of that span; then it asks again.
func TestTwoTierDownClosed(t *testing.T) {
	const retry = 200 * time.Millisecond
	tt, err := NewTwoTier(refusedClient(t), "dc", 10, time.Second, 10, WithRetry(retry))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		r, err := tt.AllowN(bg, "k", 1)
		if r.OK || err == nil || errors.Is(err, ErrUnavailable) || r.RetryAfter < 1 {
			t.Fatalf("failure %d: %+v %v, want a denial with the dial's error", i+1, r, err)
		}
		if st := tt.Stats(); st.RoundTrips != int64(i+1) || st.Errors != int64(i+1) {
			t.Fatalf("failure %d: %+v", i+1, st)
		}
	}
	start := time.Now()
	r, err := tt.AllowN(bg, "k", 1)
	if r.OK || !errors.Is(err, ErrUnavailable) || r.RetryAfter <= 0 || r.RetryAfter > retry {
		t.Fatalf("after three failures: %+v %v, want ErrUnavailable and a wait of at most %v", r, err, retry)
	}
	// Another key on the same node: the same.
	if ok, err := tt.Allow(bg, "other"); ok || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("another key: %v %v", ok, err)
	}
	if st := tt.Stats(); st.RoundTrips != 3 || st.Fallbacks != 0 {
		t.Fatalf("within the retry span: %+v, want no round trip", st)
	}
	time.Sleep(retry - time.Since(start) + time.Millisecond)
	if _, err := tt.AllowN(bg, "k", 1); err == nil || errors.Is(err, ErrUnavailable) {
		t.Fatalf("after the retry span: %v, want a round trip's error", err)
	}
	if st := tt.Stats(); st.RoundTrips != 4 {
		t.Fatalf("after the retry span: %+v, want a fourth round trip", st)
	}
}

// TestTwoTierDownOpen: failing open, a TwoTier decides on a local limit of
// share of the rate and of the burst (rounded down, at least 1), with no
// error, and counts those decisions; a request over the local burst can
// never be admitted there.
func TestTwoTierDownOpen(t *testing.T) {
	for _, tc := range []struct {
		share         float64
		events, burst int64
		wantB         int64
		every         time.Duration
	}{
		{0.5, 10, 10, 5, 200 * time.Millisecond},
		{0.25, 10, 11, 2, 500 * time.Millisecond},
		{0.01, 10, 10, 1, time.Second},
		{1, 4, 10, 10, 250 * time.Millisecond},
	} {
		tt, err := NewTwoTier(refusedClient(t), "do", tc.events, time.Second, tc.burst, WithFailOpen(tc.share), WithRetry(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if r, err := tt.AllowN(bg, "big", tc.wantB+1); tc.wantB+1 <= tt.r.max && (r.OK || err != nil || r.RetryAfter != limit.Never) {
			t.Fatalf("share %v: n over the local burst: %+v %v, want a denial for ever", tc.share, r, err)
		}
		got := int64(0)
		var last limit.Result
		for range tc.wantB + 1 {
			r, err := tt.AllowN(bg, "k", 1)
			if err != nil {
				t.Fatalf("share %v: %v", tc.share, err)
			}
			if r.OK {
				got++
			}
			last = r
		}
		if got != tc.wantB {
			t.Fatalf("share %v: %d admitted on the local limit, want its burst %d", tc.share, got, tc.wantB)
		}
		// The local rate: the next unit one interval after the burst's
		// first, within the time the loop took.
		if last.OK || last.RetryAfter > tc.every || last.RetryAfter < tc.every-100*time.Millisecond {
			t.Fatalf("share %v: after the local burst: %+v, want a wait of about %v", tc.share, last, tc.every)
		}
		if st := tt.Stats(); st.Fallbacks < tc.wantB+1 || st.RoundTrips > 3 {
			t.Fatalf("share %v: %+v", tc.share, st)
		}
	}
}

// TestSetRateBounds: SetRate and SetRateAt accept the rates at both ends
// of what they document and refuse the next ones out, naming the
// parameter; none needs a round trip.
func TestSetRateBounds(t *testing.T) {
	w, err := NewWindow(offline, "sb", 7, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGCRA(offline, "sb", 8, time.Second, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		err   error
		param string // "" = accepted
		lim   int64  // the window's limit after it, if accepted
	}{
		{"window limit 1", w.SetRate(1, 2*time.Second), "", 1},
		{"window limit 2^32-1", w.SetRate(1<<32-1, 2*time.Second), "", 1<<32 - 1},
		{"window limit 2^32", w.SetRate(1<<31, time.Second), "events", 0},
		{"window events 0", w.SetRate(0, time.Second), "events", 0},
		{"window period 0", w.SetRate(1, 0), "period", 0},
		{"window per 1ns", w.SetRate(3, 1), "events", 0},
		// events*window is 2^64 and a little: its high word is per.
		{"window product past 64 bits", w.SetRate(9223372037, 1), "events", 0},
		{"window limit 1 per second", w.SetRateAt(0, 0.5), "", 1},
		{"window limit 2^32-1 per second", w.SetRateAt(0, (1<<32-1)/2.0), "", 1<<32 - 1},
		{"window limit 2^32 per second", w.SetRateAt(0, 1<<31), "perSecond", 0},
		{"window limit under 1 per second", w.SetRateAt(0, 0.4999), "perSecond", 0},
		{"gcra 1 per 2^30 s (the burst's span is too long)", g.SetRateAt(0, 1.0/(1<<30)), "burst", 0},
		{"gcra 1 per 2^33 s", g.SetRateAt(0, 1.0/(1<<33)), "perSecond", 0},
		{"gcra 2^61 per s (over 1/ns)", g.SetRateAt(0, 1<<61), "events", 0},
		{"gcra 2^63 per s", g.SetRateAt(0, 1<<63), "perSecond", 0},
		{"gcra 5 per s", g.SetRateAt(0, 5), "", 0},
	} {
		if tc.param == "" {
			if tc.err != nil {
				t.Errorf("%s: %v", tc.name, tc.err)
			}
			continue
		}
		var pe *paramErr
		if !errors.As(tc.err, &pe) || pe.Param != tc.param {
			t.Errorf("%s: %v, want a ParamError for %s", tc.name, tc.err, tc.param)
		}
	}
	// Each accepted change is the limit in force: replay them.
	for _, tc := range []struct {
		set func() error
		lim int64
	}{
		{func() error { return w.SetRate(1, 2*time.Second) }, 1},
		{func() error { return w.SetRate(1<<32-1, 2*time.Second) }, 1<<32 - 1},
		{func() error { return w.SetRateAt(0, 0.5) }, 1},
		{func() error { return w.SetRateAt(0, (1<<32-1)/2.0) }, 1<<32 - 1},
		{func() error { return w.SetRate(3, time.Second) }, 6},
		{func() error { return w.SetRateAt(0, 3.9) }, 7},
	} {
		if err := tc.set(); err != nil {
			t.Fatal(err)
		}
		if n, _ := w.limit(); n != tc.lim {
			t.Errorf("limit %d, want %d", n, tc.lim)
		}
	}
}

// TestCloseZero: Close on a nil or zero TwoTier returns without a panic,
// and the zero one still denies.
func TestCloseZero(t *testing.T) {
	var nt *TwoTier
	var zt TwoTier
	for name, f := range map[string]func() error{"nil": func() error { return nt.Close(bg) }, "zero": func() error { return zt.Close(bg) }} {
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("%s TwoTier Close: panic %v", name, p)
				}
			}()
			f()
		}()
	}
	if ok, err := zt.Allow(bg, "k"); ok || err == nil {
		t.Errorf("zero TwoTier after Close: %v %v", ok, err)
	}
}

// TestCloseDown: Close, with Redis gone, tries every key and returns an
// error; the closed TwoTier then denies with ErrClosed.
func TestCloseDown(t *testing.T) {
	s := redistest.Start(t)
	c := goredis.NewClient(&goredis.Options{Addr: s.Addr, MaxRetries: -1, DialerRetries: 1, DialerRetryTimeout: time.Nanosecond})
	t.Cleanup(func() { c.Close() })
	tt, err := NewTwoTier(c, "cd", 1, 10*time.Minute, 100, WithBatch(40), WithLease(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a", "b", "c"} {
		for range 10 { // the borrows grow: units are left in the pool
			if ok, err := tt.Allow(bg, k); !ok || err != nil {
				t.Fatalf("%s: %v %v", k, ok, err)
			}
		}
		if tt.pool(k) == 0 {
			t.Fatalf("%s: no units held", k)
		}
	}
	s.Kill()
	if err := tt.Close(bg); err == nil {
		t.Fatal("Close with Redis gone: no error")
	}
	if ok, err := tt.Allow(bg, "a"); ok || !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v %v", ok, err)
	}
}

// TestGiveBackCount: Close gives back, of its last borrow, what the pool
// holds and the reserved units not yet in it, and asks Redis (here down:
// an error) only when that is some units and it knows what the borrow
// wrote.
func TestGiveBackCount(t *testing.T) {
	for _, tc := range []struct {
		name            string
		pool, n, out, m int64
		last            string
		asks            bool
	}{
		{"nothing left", 0, 0, 0, 5, "w", false},
		{"pool", 2, 0, 0, 5, "w", true},
		{"reserved, all out", 0, 1, 1, 5, "w", false},
		{"reserved, not out", 0, 1, 0, 5, "w", true},
		{"pool and reserved", 1, 1, 0, 1, "w", true},
		{"nothing of the last borrow", 3, 0, 0, 0, "w", false},
		{"unknown write", 3, 0, 0, 5, "", false},
	} {
		tt, err := NewTwoTier(refusedClient(t), "gc", 10, time.Second, 100)
		if err != nil {
			t.Fatal(err)
		}
		e := tt.entry("k")
		e.word.Store(uint64(tc.pool))
		e.res.n, e.res.out = tc.n, tc.out
		e.lastM, e.last = tc.m, tc.last
		if err := tt.Close(bg); (err != nil) != tc.asks {
			t.Errorf("%s: Close %v, want a round trip %v", tc.name, err, tc.asks)
		}
		if e.word.Load() != 0 || e.lastM != 0 || e.res.out != e.res.n || e.reserving.Load() {
			t.Errorf("%s: the entry after Close: word %d lastM %d res %+v", tc.name, e.word.Load(), e.lastM, e.res)
		}
	}
}

// TestScriptErrorKeepsFunctions: an error raised inside the library (a key
// of another type: WRONGTYPE, "on @user_function") is returned as it is
// and does not turn the Limiter to scripts, which only a server without
// Functions does.
func TestScriptErrorKeepsFunctions(t *testing.T) {
	_, c := server(t)
	l, err := NewGCRA(c, "se", 10, time.Second, 5)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.LPush(bg, l.keyOf("k"), "x").Err(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if r, err := l.AllowN(bg, "k", 1); err == nil || r.OK || !strings.HasPrefix(err.Error(), "WRONGTYPE") {
			t.Fatalf("a list as the key: %+v %v, want WRONGTYPE", r, err)
		}
	}
	if l.eval.Load() {
		t.Fatal("a script's error turned the Limiter to scripts")
	}
	if r, err := l.AllowN(bg, "other", 1); err != nil || !r.OK {
		t.Fatalf("another key: %+v %v", r, err)
	}
}

// TestTwoTierParams: NewTwoTier accepts every option at both ends of its
// range and refuses the next values out, naming them; its default lease
// (a quarter of the burst's refill time, within [1ms, 1s]) sets the Redis
// burst, burst - ceil(events*lease/period), and the default batch is half
// of that, at least 1.
func TestTwoTierParams(t *testing.T) {
	mk := func(ev int64, per time.Duration, b int64, o ...Option) (*TwoTier, error) {
		return NewTwoTier(offline, "tp", ev, per, b, o...)
	}
	for _, tc := range []struct {
		name      string
		ev        int64
		per       time.Duration
		b         int64
		o         []Option
		param     string // "" = accepted
		rb, batch int64
	}{
		{"lease 1ms", 1, time.Second, 10, []Option{WithLease(time.Millisecond)}, "", 9, 4},
		{"lease 1ms less 1ns", 1, time.Second, 10, []Option{WithLease(time.Millisecond - 1)}, "lease", 0, 0},
		{"lease an hour", 1, time.Hour, 10, []Option{WithLease(time.Hour)}, "", 9, 4},
		{"lease an hour and 1ns", 1, time.Hour, 10, []Option{WithLease(time.Hour + 1)}, "lease", 0, 0},
		{"default lease 50ms", 100, time.Second, 20, nil, "", 15, 7},
		{"default lease 25s, at most 1s", 1, time.Second, 100, nil, "", 99, 49},
		{"default lease 500us, at least 1ms", 1000000, time.Second, 2000, nil, "", 1000, 500},
		{"burst 2^24-1", 1000000, time.Second, 1<<24 - 1, nil, "", 1<<24 - 1 - 1000000, (1<<24 - 1 - 1000000) / 2},
		{"burst 2^24", 1000000, time.Second, 1 << 24, nil, "burst", 0, 0},
		{"Redis burst 1, batch 1", 1, time.Second, 2, nil, "", 1, 1},
		{"batch the Redis burst", 1, time.Second, 10, []Option{WithBatch(9)}, "", 9, 9},
		{"batch past the Redis burst", 1, time.Second, 10, []Option{WithBatch(10)}, "batch", 0, 0},
		{"batch -1", 1, time.Second, 10, []Option{WithBatch(-1)}, "batch", 0, 0},
		{"share 0", 1, time.Second, 10, []Option{WithFailOpen(0)}, "", 9, 4},
		{"share 1", 1, time.Second, 10, []Option{WithFailOpen(1)}, "", 9, 4},
		{"share -0.01", 1, time.Second, 10, []Option{WithFailOpen(-0.01)}, "share", 0, 0},
		{"share NaN", 1, time.Second, 10, []Option{WithFailOpen(math.NaN())}, "share", 0, 0},
		{"retry -1ns", 1, time.Second, 10, []Option{WithRetry(-1)}, "retry", 0, 0},
		{"timeout -1ns", 1, time.Second, 10, []Option{WithTimeout(-1)}, "timeout", 0, 0},
		{"events 0", 0, time.Second, 10, nil, "events", 0, 0},
	} {
		tt, err := mk(tc.ev, tc.per, tc.b, tc.o...)
		if tc.param == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			} else if tt.r.max != tc.rb || tt.batch != tc.batch {
				t.Errorf("%s: Redis burst %d batch %d, want %d %d", tc.name, tt.r.max, tt.batch, tc.rb, tc.batch)
			}
			continue
		}
		var pe *paramErr
		if !errors.As(err, &pe) || pe.Param != tc.param {
			t.Errorf("%s: %v, want a ParamError for %s", tc.name, err, tc.param)
		}
	}
	// The ranges the burst's errors give.
	for _, tc := range []struct {
		b        int64
		lease    time.Duration
		min, max any
	}{{10, 100 * time.Millisecond, "11", int64(1<<24 - 1)}, {1 << 24, time.Millisecond, int64(2), int64(1<<24 - 1)}} {
		var pe *paramErr
		if _, err := mk(100, time.Second, tc.b, WithLease(tc.lease)); !errors.As(err, &pe) || pe.Param != "burst" || pe.Min != tc.min || pe.Max != tc.max {
			t.Errorf("burst %d, lease %v: %v, want a ParamError for burst in [%v, %v]", tc.b, tc.lease, err, tc.min, tc.max)
		}
	}
	// The defaults of the retry span and the timeout: 100ms each.
	tt, err := mk(1, time.Second, 10)
	if err != nil {
		t.Fatal(err)
	}
	if tt.retry != int64(100*time.Millisecond) || tt.r.cfg.timeout != 100*time.Millisecond {
		t.Errorf("retry %v, timeout %v, want 100ms each", time.Duration(tt.retry), tt.r.cfg.timeout)
	}
}

// TestWholeSecondTimes: decisions at a caller's times on whole seconds
// (nanoseconds 0, before and after 1970) are the Go steps' decisions.
func TestWholeSecondTimes(t *testing.T) {
	_, c := server(t)
	g, _ := NewGCRA(c, "ws", 3, time.Second, 2)
	w, _ := NewWindow(c, "ww", 3, time.Second)
	gref, _ := newGoGCRA(3, time.Second, 2)
	wref, _ := newGoWindow(3, time.Second)
	for _, base := range []int64{0, -5e9, 1700000000e9} {
		var tat uint64
		var ws goWindowState
		for i, d := range []int64{0, 0, 0, 1e9, 1e9, 2e9, 5e9} {
			now := base + d
			next, want, _ := stepGoGCRA(gref, tat, now, 1)
			if got, err := g.allowNAt(bg, "k"+strconv.FormatInt(base, 10), now, 1); err != nil || got != want {
				t.Fatalf("gcra at %d (step %d): %+v %v, want %+v", now, i, got, err, want)
			}
			tat = next
			wnext, wwant, _ := stepGoWindow(wref, ws, now, 1)
			if got, err := w.allowNAt(bg, "k"+strconv.FormatInt(base, 10), now, 1); err != nil || got != wwant {
				t.Fatalf("window at %d (step %d): %+v %v, want %+v", now, i, got, err, wwant)
			}
			ws = wnext
		}
	}
}
