package striped

import (
	"cmp"
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cellrate/cellrate/internal/bucketcore"
	"github.com/cellrate/cellrate/internal/intmath"
	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/nanotime"
)

// admission is one admitted request: n tokens at now.
type admission struct{ now, n int64 }

// checkBound verifies, with math/big, that for every closed interval
// [s, s+t] the admitted tokens with now inside it are at most burst + r*t:
// in units, sum(n)*p <= burst*p + t*e. It returns the first violation.
func checkBound(l *Limiter, adm []admission) error {
	if len(adm) == 0 {
		return nil
	}
	adm = slices.Clone(adm)
	slices.SortFunc(adm, func(a, b admission) int { return cmp.Compare(a.now, b.now) })
	e := new(big.Int).SetUint64(l.e())
	p := new(big.Int).SetUint64(l.p())
	capU := new(big.Int).SetUint64(l.cap())
	// For windows [t_i, t_j]: S_j*p - t_j*e <= cap + min_i(S_{i-1}*p - t_i*e),
	// where S is the running token sum through a now (all admissions at
	// one now are in or out of a window together).
	var best *big.Int
	sum := new(big.Int)
	for i := 0; i < len(adm); {
		t := adm[i].now
		tb := new(big.Int).Mul(big.NewInt(t), e)
		start := new(big.Int).Sub(new(big.Int).Mul(sum, p), tb)
		if best == nil || start.Cmp(best) < 0 {
			best = start
		}
		for ; i < len(adm) && adm[i].now == t; i++ {
			sum.Add(sum, big.NewInt(adm[i].n))
		}
		end := new(big.Int).Sub(new(big.Int).Mul(sum, p), tb)
		if end.Cmp(new(big.Int).Add(capU, best)) > 0 {
			return errors.New("admitted more than burst + rate*t in a window ending at now " + big.NewInt(t).String())
		}
	}
	return nil
}

func mustNew(t testing.TB, events int64, period time.Duration, burst int64, opts ...Option) *Limiter {
	t.Helper()
	l, err := New(events, period, burst, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// cacheN returns the limiter's i-th cache, growing the table to hold it.
func cacheN(l *Limiter, i int) *cache {
	l.caches.grow(i)
	return l.caches.get(i)
}

func TestNewValidation(t *testing.T) {
	cases := []struct {
		name  string
		make  func() (*Limiter, error)
		param string
	}{
		{"rate 0", func() (*Limiter, error) { return NewRate(0, 10) }, "rate"},
		{"rate NaN", func() (*Limiter, error) { return NewRate(math.NaN(), 10) }, "rate"},
		{"rate +Inf", func() (*Limiter, error) { return NewRate(math.Inf(1), 10) }, "rate"},
		{"rate -1", func() (*Limiter, error) { return NewRate(-1, 10) }, "rate"},
		{"burst 0", func() (*Limiter, error) { return NewRate(10, 0) }, "burst"},
		{"burst -5", func() (*Limiter, error) { return New(1, time.Second, -5) }, "burst"},
		{"events 0", func() (*Limiter, error) { return New(0, time.Second, 5) }, "events"},
		{"period 0", func() (*Limiter, error) { return New(1, 0, 5) }, "period"},
		{"burst too large", func() (*Limiter, error) { return New(1, time.Hour, 1<<60) }, "burst"},
		{"batch 0", func() (*Limiter, error) { return NewRate(10, 10, WithBatch(0)) }, "batch"},
		{"batch > burst", func() (*Limiter, error) { return NewRate(10, 10, WithBatch(11)) }, "batch"},
		{"batch >= 2^31", func() (*Limiter, error) { return NewRate(1e9, 1<<40, WithBatch(1<<31)) }, "batch"},
		{"idle 0", func() (*Limiter, error) { return NewRate(10, 10, WithIdleAfter(0)) }, "idle-after"},
		{"idle -1ns", func() (*Limiter, error) { return NewRate(10, 10, WithIdleAfter(-1)) }, "idle-after"},
		{"nil clock", func() (*Limiter, error) { return NewRate(10, 10, WithClock(nil)) }, "clock"},
		{"zero params", func() (*Limiter, error) { return fromParams(bucketcore.Params{}) }, "params"},
		{"rate 1e30", func() (*Limiter, error) { return NewRate(1e30, 10) }, "rate"},
		{"period -1", func() (*Limiter, error) { return New(1, -1, 5) }, "period"},
	}
	for _, c := range cases {
		l, err := c.make()
		if err == nil || l != nil {
			t.Errorf("%s: got (%v, %v), want an error", c.name, l, err)
			continue
		}
		var pe *limit.ParamError
		if !errors.As(err, &pe) || pe.Pkg != "striped" || pe.Param != c.param {
			t.Errorf("%s: error %#v should be a *limit.ParamError of package striped for %q", c.name, err, c.param)
			continue
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "striped: "+c.param) {
			t.Errorf("%s: message %q", c.name, msg)
		}
	}
}

func TestDefaults(t *testing.T) {
	setGOMAXPROCS(t, 4)
	l := mustNew(t, 1000, time.Second, 800)
	if got := l.Batch(); got != 100 {
		t.Errorf("default batch = %d, want burst/(2*GOMAXPROCS) = 100", got)
	}
	if got := l.IdleAfter(); got != 200*time.Millisecond {
		t.Errorf("default idle-after = %v, want burst/rate/4 = 200ms", got)
	}
	if l := mustNew(t, 1, time.Second, 1); l.Batch() != 1 {
		t.Errorf("batch for burst 1 = %d, want 1", l.Batch())
	}
}

func TestCostErrors(t *testing.T) {
	l := mustNew(t, 10, time.Second, 5)
	if r, err := l.AllowNAt(0, -1); !errors.Is(err, limit.ErrNegativeCost) || r.OK || r.RetryAfter != limit.Never {
		t.Errorf("AllowNAt(-1) = %+v, %v", r, err)
	}
	if r, err := l.AllowNAt(0, 6); !errors.Is(err, limit.ErrCostExceedsBurst) || r.OK || r.RetryAfter != limit.Never {
		t.Errorf("AllowNAt(burst+1) = %+v, %v", r, err)
	}
	if r, err := l.AllowNAt(0, 0); err != nil || !r.OK {
		t.Errorf("AllowNAt(0) = %+v, %v", r, err)
	}
}

// TestBurstThenRate drives one cache: a full bucket admits burst at once,
// then one token per interval, and RetryAfter says when.
func TestBurstThenRate(t *testing.T) {
	l := mustNew(t, 10, time.Second, 5, WithBatch(2)) // a token per 100ms
	c := cacheN(l, 0)
	for i := range 5 {
		if r := l.allowN(c, 0, 1); !r.OK {
			t.Fatalf("token %d of the burst denied: %+v", i+1, r)
		}
	}
	r := l.allowN(c, 0, 1)
	if r.OK || r.RetryAfter != 100e6 {
		t.Fatalf("6th token at 0 = %+v, want denied with RetryAfter 100ms", r)
	}
	if r := l.allowN(c, 100e6-1, 1); r.OK {
		t.Fatalf("token at 100ms-1ns admitted")
	}
	if r := l.allowN(c, 100e6, 1); !r.OK {
		t.Fatalf("token at 100ms denied: %+v", r)
	}
	r = l.allowN(c, 100e6, 3)
	if r.OK || r.RetryAfter != 300e6 {
		t.Fatalf("3 tokens at 100ms = %+v, want denied with RetryAfter 300ms", r)
	}
}

// schedule drives a limiter's caches with random requests: mostly moving
// time forward, sometimes a stale now; it returns the admissions.
func schedule(t testing.TB, l *Limiter, r *rand.Rand, caches, ops int, step int64) []admission {
	var adm []admission
	now := r.Int64N(1<<40) - 1<<39
	for range ops {
		c := cacheN(l, r.IntN(caches))
		at := now
		switch r.IntN(10) {
		case 0:
			at -= r.Int64N(10 * step) // a stale now
		case 1, 2:
			now += r.Int64N(step)
			at = now
		case 3:
			// Land on (or next to) a multiple of the step, where slots
			// start and end when the step is a token's refill time.
			now += step - now%step + r.Int64N(3) - 1
			at = now
		}
		n := int64(1)
		if r.IntN(4) == 0 {
			n = r.Int64N(l.ps.Burst() + 1)
		}
		if res := l.allowN(c, at, n); res.OK && n > 0 {
			adm = append(adm, admission{at, n})
		}
	}
	return adm
}

// randomLimiter returns a limiter with random small parameters.
func randomLimiter(t testing.TB, r *rand.Rand) *Limiter {
	events := 1 + r.Int64N(20)
	period := time.Duration(1 + r.Int64N(int64(time.Second)))
	if r.IntN(2) == 0 {
		period = time.Duration(events * (1 + r.Int64N(1e6))) // a whole number of ns a token
	}
	burst := 1 + r.Int64N(40)
	return mustNew(t, events, period, burst,
		WithBatch(1+r.Int64N(burst)),
		WithIdleAfter(time.Duration(int64(minIdle)+r.Int64N(int64(period)))))
}

func TestNeverOverAdmitsRandom(t *testing.T) {
	seeds, ops := 300, 3000
	if testing.Short() {
		seeds, ops = 40, 1000
	}
	for seed := range seeds {
		r := rand.New(rand.NewPCG(uint64(seed), 99))
		l := randomLimiter(t, r)
		events, period := l.ps.Rate()
		step := max(1, int64(period)/events) // about a token's refill
		adm := schedule(t, l, r, 1+r.IntN(6), ops, step)
		if err := checkBound(l, adm); err != nil {
			t.Fatalf("seed %d (rate %d/%v, burst %d, batch %d): %v", seed, events, period, l.ps.Burst(), l.batch, err)
		}
	}
}

// TestCheckBoundCatchesOverAdmission shows that the checker fails a
// schedule that admits one token too many.
func TestCheckBoundCatchesOverAdmission(t *testing.T) {
	l := mustNew(t, 10, time.Second, 5)
	ok := []admission{{0, 5}, {100e6, 1}, {300e6, 2}}
	if err := checkBound(l, ok); err != nil {
		t.Fatalf("exact schedule rejected: %v", err)
	}
	for _, bad := range [][]admission{
		{{0, 6}},
		{{0, 5}, {100e6 - 1, 1}},
		{{50, 5}, {300e6 + 49, 3}},
	} {
		if checkBound(l, bad) == nil {
			t.Errorf("over-admitting schedule %v passed", bad)
		}
	}
}

func FuzzNeverOverAdmits(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte{0xff, 0, 0xff, 0, 0x80, 0x7f, 1, 1, 1, 1, 1, 1})
	// At the end of time: a token per 1001ns, a jump to MaxInt64, the whole burst taken 4052ns
	// before it, a loan at MaxInt64 whose slots end past it, then three
	// requests 3039ns before MaxInt64 (a loan cached with its end saturated
	// would admit them).
	f.Add([]byte{3, 0, 1, 2, 3, 0xb2, 0xeb, 0x71, 4, 0xc0, 0, 0x40, 3, 0x40, 3, 0x40, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 5 {
			return
		}
		burst := 1 + int64(data[0]%32)
		l := mustNew(t, 1+int64(data[1]%8), time.Duration(1+int64(data[2])*1000), burst,
			WithBatch(1+int64(data[3])%burst), WithIdleAfter(minIdle))
		var adm []admission
		now := []int64{0, math.MinInt64, -1 << 40, math.MaxInt64 - 1<<30}[data[4]%4]
		// Times cover the whole int64 range: the start at either end, the
		// jumps of case 2 by up to 2^60 either way, saturating.
		for i := 5; i+1 < len(data); i += 2 {
			op, arg := data[i], data[i+1]
			c := cacheN(l, int(op%4))
			at := now
			switch op >> 6 {
			case 0:
				now = intmath.SatAdd(now, int64(arg)*97)
				at = now
			case 1:
				at = intmath.SatAdd(now, -int64(arg)*1013) // stale
			case 2:
				// A jump across int64 time, forward or back, up to its ends.
				if arg >= 0xe0 {
					j := int64(1) << (arg & 0x0f << 2 % 63)
					if arg&0x10 != 0 {
						j = -j
					}
					now = intmath.SatAdd(now, j)
					at = now
				}
			}
			n := int64(1)
			if op&0x30 == 0x30 {
				n = int64(arg) % (burst + 1)
			}
			if r := l.allowN(c, at, n); r.OK && n > 0 {
				adm = append(adm, admission{at, n})
			}
		}
		if err := checkBound(l, adm); err != nil {
			t.Fatal(err)
		}
	})
}

// TestUnderAdmissionBound: with every cache asking for a token at every
// step, the limiter admits at least what the ideal bucket (bucketcore.Params.Step
// on one state) admits for the same requests, less what the caches hold at
// the end (at most batch each) and one token of rounding a cache.
func TestUnderAdmissionBound(t *testing.T) {
	seeds := 20
	if testing.Short() {
		seeds = 4
	}
	for seed := range seeds {
		r := rand.New(rand.NewPCG(uint64(seed), 5))
		caches := 1 + r.IntN(6)
		l := mustNew(t, 1+r.Int64N(50), time.Second, 10+r.Int64N(200))
		l.batch = 1 + r.Int64N(max(1, l.ps.Burst()/int64(caches)))
		events, period := l.ps.Rate()
		step := max(1, int64(period)/events/int64(caches)/2)
		var ideal bucketcore.State
		got, want := int64(0), int64(0)
		now := int64(0)
		for range 4000 {
			now += step
			for i := range caches {
				if l.allowN(cacheN(l, i), now, 1).OK {
					got++
				}
				var res limit.Result
				ideal, res, _ = l.ps.Step(ideal, now, 1)
				if res.OK {
					want++
				}
			}
		}
		if slack := int64(caches) * (l.batch + 1); got < want-slack {
			t.Errorf("seed %d: %d caches, batch %d: admitted %d, ideal %d: short by %d > %d", seed, caches, l.batch, got, want, want-got, slack)
		}
	}
}

// TestIdleCacheTakenOver: a cache borrows a batch and goes idle; another
// cache that the shared bucket denies gets those tokens once the first has
// been idle for IdleAfter, and not before.
func TestIdleCacheTakenOver(t *testing.T) {
	const idle = 10 * time.Millisecond
	// A token per 1ms, burst 100: a borrowed token stays usable ~100ms.
	l := mustNew(t, 1000, time.Second, 100, WithBatch(40), WithIdleAfter(idle))
	a, b := cacheN(l, 0), cacheN(l, 1)
	if !l.allowN(a, 0, 1).OK {
		t.Fatal("first token denied")
	}
	if k := a.w.Load() >> tokShift; k != 40 {
		t.Fatalf("cache a holds %d tokens, want the batch of 40", k)
	}
	// b drains the bucket: 59 tokens left after a's 41.
	got := 0
	for l.allowN(b, 0, 1).OK {
		got++
	}
	if got != 59 {
		t.Fatalf("b got %d tokens at 0, want 59", got)
	}
	// The bucket's refill line starts at 0: 9 whole tokens by 10ms-1ns.
	// Before a has been idle for 10ms, b cannot use a's tokens.
	now := int64(idle) - 1
	if got := drain(l, b, now); got != 9 {
		t.Fatalf("b got %d tokens at %v, want the 9 refilled", got, time.Duration(now))
	}
	if k := a.w.Load() >> tokShift; k == 0 {
		t.Fatal("a's tokens were taken before it was idle for IdleAfter")
	}
	// At 15ms b gets the 6 more refilled, then, denied by the bucket, takes
	// over a's tokens still usable: a's loan was slots (1ms, 41ms] from a
	// full bucket at 0, and those starting at or after 15ms are 26. b uses
	// one of them now and keeps 25, with their slots.
	now = int64(idle) + int64(idle)/2
	for i := range 7 {
		if !l.allowN(b, now, 1).OK {
			t.Fatalf("b's token %d at %v denied; want 6 refilled, then one of a's", i+1, time.Duration(now))
		}
	}
	if k := a.w.Load() >> tokShift; k != 0 {
		t.Fatalf("a still holds %d tokens after idling for %v", k, time.Duration(now))
	}
	if k := b.w.Load() >> tokShift; k != 25 {
		t.Fatalf("b holds %d tokens after taking a's over, want 25", k)
	}
	// The 25 keep their slots (16ms, 41ms]: by 30ms, 14 are left, and the
	// bucket's line gives b what the 60 taken at 0 left: 30 - 9 - 6 = 15.
	now = 30e6
	if got := drain(l, b, now); got != 15+11 {
		t.Fatalf("b got %d tokens at 30ms, want 15 refilled + the 11 of a's whose slots have not started", got)
	}
}

// drain admits single tokens on cache c at now until one is denied.
func drain(l *Limiter, c *cache, now int64) int {
	n := 0
	for l.allowN(c, now, 1).OK {
		n++
	}
	return n
}

// TestStrandedTokensExpire: without anyone to take them over, a cache's
// tokens expire when the bucket's refill reaches their slots, so a
// refilled bucket plus the cache never hold more than burst.
func TestStrandedTokensExpire(t *testing.T) {
	l := mustNew(t, 1000, time.Second, 10, WithBatch(9), WithIdleAfter(time.Hour))
	a, b := cacheN(l, 0), cacheN(l, 1)
	l.allowN(a, 0, 1) // a holds 9 tokens, slots ending at 2..10ms
	total := drain(l, b, 10e6) + drain(l, a, 10e6)
	if total != 10 {
		t.Fatalf("at 10ms b and a admitted %d, want exactly burst 10 (a's 9 expired as the bucket refilled)", total)
	}
}

// TestConcurrentNeverOverAdmits runs goroutines against one limiter with a
// shared fake clock (so nows arrive out of order), in rounds at different
// GOMAXPROCS: a round at GOMAXPROCS 1 leaves the caches of the other Ps
// idle, to be taken over. It checks the bound over every admission.
func TestConcurrentNeverOverAdmits(t *testing.T) {
	ops := 4000
	if testing.Short() {
		ops = 1000
	}
	setGOMAXPROCS(t, 1)
	// 1 token per 2ns of the fake clock, a burst lasting 10µs of it.
	l := mustNew(t, 500, time.Microsecond, 5000, WithBatch(50), WithIdleAfter(minIdle))
	var clock atomic.Int64
	logs := make([][]admission, 6)
	// Every round asks for more than the rate (about 2.8 tokens a call
	// while the clock moves 1 or 2ns), so the bucket builds a backlog and
	// cached tokens have slots ahead of now; a round on one P after one on
	// several leaves the other caches idle, holding tokens that P needs.
	for _, round := range []struct {
		procs int
		step  int64
	}{{4, 5}, {1, 3}, {3, 5}, {1, 3}, {2, 5}, {1, 3}} {
		procs := round.procs
		runtime.GOMAXPROCS(procs)
		var wg sync.WaitGroup
		for g := range logs {
			wg.Go(func() {
				r := rand.New(rand.NewPCG(uint64(g), uint64(procs)))
				for range ops {
					now := clock.Add(r.Int64N(round.step))
					n := int64(1)
					if r.IntN(8) == 0 {
						n = 1 + r.Int64N(30)
					}
					if res, _ := l.AllowNAt(now, n); res.OK {
						logs[g] = append(logs[g], admission{now, n})
					}
				}
			})
		}
		wg.Wait()
	}
	var all []admission
	for _, lg := range logs {
		all = append(all, lg...)
	}
	if len(all) == 0 {
		t.Fatal("nothing admitted")
	}
	if err := checkBound(l, all); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d admissions, %d borrows, %d idle caches taken over", len(all), l.borrows.Load(), l.takeovers.Load())
}

func TestLimiterAllocs(t *testing.T) {
	l := mustNew(t, 1e9, time.Second, 1e6)
	now := int64(1e9)
	l.AllowAt(now)
	if a := testing.AllocsPerRun(1000, func() { l.AllowAt(now) }); a != 0 {
		t.Errorf("AllowAt admitting allocates %v a call", a)
	}
	if a := testing.AllocsPerRun(1000, func() { _, _ = l.AllowNAt(now, 3) }); a != 0 {
		t.Errorf("AllowNAt admitting allocates %v a call", a)
	}
	d := mustNew(t, 1, time.Hour, 1)
	d.AllowAt(0)
	if a := testing.AllocsPerRun(1000, func() { d.AllowAt(1) }); a != 0 {
		t.Errorf("AllowAt denying allocates %v a call", a)
	}
}

// benchAllow runs allow on every P and reports the fraction denied (a
// goroutine descheduled for longer than burst/rate between reading the
// clock and deciding gets a stale now, which may be denied).
func benchAllow(b *testing.B, allow func() bool) {
	var denied atomic.Int64
	b.ReportAllocs()
	withCPU(b, func() {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if !allow() {
					denied.Add(1)
				}
			}
		})
	})
	b.ReportMetric(float64(denied.Load())/float64(b.N), "denied/op")
}

// The admitting benchmarks: 1e9 tokens a second, so that the demand stays
// below the rate, with the real clock (Allow) or one fixed now (AllowAt,
// the decision alone, with a burst no run exhausts).

func BenchmarkLimiterAllow(b *testing.B) {
	l, err := NewRate(1e9, 1e8, WithBatch(1e6))
	if err != nil {
		b.Fatal(err)
	}
	benchAllow(b, l.Allow)
	reportSharedWrites(b, l)
}

// reportSharedWrites reports how often admissions wrote the shared line
// (the plain bucket writes it on every admission).
func reportSharedWrites(b *testing.B, l *Limiter) {
	b.ReportMetric(float64(l.borrows.Load())/float64(b.N), "shared-writes/op")
}

// BenchmarkBucketAllow is the baseline: the same rate and burst on one
// shared bucket cell.
func BenchmarkBucketAllow(b *testing.B) {
	l, err := bucketcore.NewRate(1e9, 1e8)
	if err != nil {
		b.Fatal(err)
	}
	benchAllow(b, l.Allow)
}

func BenchmarkLimiterAllowAt(b *testing.B) {
	l, err := NewRate(1e9, 1e12, WithBatch(1e6))
	if err != nil {
		b.Fatal(err)
	}
	benchAllow(b, func() bool { return l.AllowAt(0) })
	reportSharedWrites(b, l)
}

func BenchmarkBucketAllowAt(b *testing.B) {
	l, err := bucketcore.NewRate(1e9, 1e12)
	if err != nil {
		b.Fatal(err)
	}
	benchAllow(b, func() bool { return l.AllowAt(0) })
}

// BenchmarkLimiterDeny measures denials, which read the caller's cache only.
func BenchmarkLimiterDeny(b *testing.B) {
	l, err := NewRate(1, 1)
	if err != nil {
		b.Fatal(err)
	}
	now := nanotime.Now()
	l.AllowAt(now)
	l.borrows.Store(0)
	b.ReportAllocs()
	withCPU(b, func() {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if l.AllowAt(now) {
					b.Error("admitted")
					return
				}
			}
		})
	})
	reportSharedWrites(b, l)
}

// TestExtremeTimes runs schedules at both ends of int64 time and across
// jumps between them: no overflow may admit more than the bound.
func TestExtremeTimes(t *testing.T) {
	for seed := range 20 {
		r := rand.New(rand.NewPCG(uint64(seed), 17))
		l := randomLimiter(t, r)
		if seed%2 == 0 {
			l = mustNew(t, 1e9, time.Nanosecond, 1+r.Int64N(50), WithBatch(1)) // 1e18 a second
		}
		var adm []admission
		// Time jumps forward from base to base, with a few stale nows.
		for _, base := range []int64{math.MinInt64, math.MinInt64 / 2, -1 << 20, math.MaxInt64 / 2, math.MaxInt64 - 1<<20} {
			off := int64(0)
			for i := range 400 {
				off += r.Int64N(1 << 10)
				off = min(off, 1<<20)
				now := base + off
				if r.IntN(10) == 0 {
					now = base + max(off-r.Int64N(1<<12), 0) // stale, without wrapping
				}
				n := 1 + r.Int64N(l.ps.Burst())
				if res := l.allowN(cacheN(l, r.IntN(3)), now, n); res.OK {
					adm = append(adm, admission{now, n})
				} else if i == 0 {
					t.Fatalf("seed %d: %d tokens denied at %d, the first request after a jump of 2^62ns: %+v", seed, n, now, res)
				} else if res.RetryAfter < 1 {
					t.Fatalf("seed %d: denial at %d with RetryAfter %d", seed, now, res.RetryAfter)
				}
			}
		}
		for range 50 {
			now := math.MaxInt64 - r.Int64N(3)
			if l.allowN(cacheN(l, r.IntN(3)), now, 1).OK {
				adm = append(adm, admission{now, 1})
			}
		}
		if len(adm) < 5 {
			t.Fatalf("seed %d: only %d admissions: the schedule tests little", seed, len(adm))
		}
		if err := checkBound(l, adm); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
}

// shortfall runs caches that each borrow once at 0 and go idle, then cache
// 0 asking for a token every step, and returns how many fewer tokens it got
// than the ideal bucket (bucketcore.Params.Step on one state) would have given
// the same requests.
func shortfall(t *testing.T, caches int, idle time.Duration) (short int64, l *Limiter) {
	l = mustNew(t, 1000, time.Second, 200, WithBatch(30), WithIdleAfter(idle))
	var ideal bucketcore.State
	got, want := int64(0), int64(0)
	ask := func(c *cache, now int64) {
		if l.allowN(c, now, 1).OK {
			got++
		}
		var r limit.Result
		if ideal, r, _ = l.ps.Step(ideal, now, 1); r.OK {
			want++
		}
	}
	for i := range caches {
		ask(cacheN(l, i), 0)
	}
	for now := int64(0); now < 2e9; now += 1e5 {
		ask(cacheN(l, 0), now)
	}
	return want - got, l
}

// TestIdleCachesUnderAdmission: tokens stranded in idle caches cost at
// most a batch a cache, and taking them over recovers them.
func TestIdleCachesUnderAdmission(t *testing.T) {
	const caches = 6
	taken, l := shortfall(t, caches, time.Millisecond)
	if bound := int64(caches) * l.batch; taken < 0 || taken > bound {
		t.Fatalf("with takeover after 1ms: short by %d, want within [0, %d]", taken, bound)
	}
	stranded, _ := shortfall(t, caches, time.Hour)
	if bound := int64(caches) * l.batch; stranded > bound {
		t.Fatalf("without takeover: short by %d, want at most %d", stranded, bound)
	}
	if taken >= stranded {
		t.Fatalf("takeover did not help: short by %d with it, %d without", taken, stranded)
	}
	t.Logf("short by %d tokens with takeover after 1ms, %d without (batch %d, %d caches)", taken, stranded, l.batch, caches)
}

// TestWithClock: the plain methods read the given clock.
func TestWithClock(t *testing.T) {
	now := int64(0)
	l := mustNew(t, 10, time.Second, 2, WithClock(func() int64 { return now }))
	// One call per step, so that a goroutine moving to another P (and
	// cache) between calls sees the same answers.
	if r, _ := l.AllowN(2); !r.OK || l.Allow() {
		t.Fatal("want the burst of 2 at the clock's 0, then a denial")
	}
	r, err := l.AllowN(1)
	if err != nil || r.OK || r.RetryAfter != 100e6 {
		t.Fatalf("AllowN(1) at 0 = %+v, %v; want a denial with RetryAfter 100ms", r, err)
	}
	now = 100e6
	if !l.Allow() {
		t.Fatal("denied when the clock reads 100ms")
	}
}
