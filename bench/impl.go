package bench

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	juju "github.com/juju/ratelimit"
	"github.com/throttled/throttled/v2"
	"go.uber.org/ratelimit"
	"golang.org/x/time/rate"
)

// A Limiter is one implementation under test, seen through the calls
// every benchmark and accuracy run makes.
type Limiter interface {
	// Allow takes one unit at the current time of its own clock.
	Allow() bool
	// AllowNAt takes n units at now, nanoseconds on an injected clock,
	// if all n are available.
	AllowNAt(now, n int64) bool
}

// An Impl builds a Limiter admitting rate units per second with bursts of
// burst units.
type Impl struct {
	// Name is also the benchmark name: no spaces or slashes.
	Name string
	// Peer marks implementations from other modules.
	Peer bool
	// Blocks marks implementations that wait instead of denying: they are
	// left out of the mostly-denying runs and of the accuracy report.
	Blocks bool
	New    func(rate float64, burst int64) Limiter
	// Fits, if set, reports whether the implementation can be built with
	// this rate and burst; runs it cannot take are left out.
	Fits func(rate float64, burst int64) bool
}

// Takes reports whether im can be built with rate and burst.
func (im Impl) Takes(rate float64, burst int64) bool {
	return im.Fits == nil || im.Fits(rate, burst)
}

// Baseline is the Impl every limiter ratio is taken against.
const Baseline = "x-time-rate"

// Impls lists every limiter compared: the peers, then cellrate's own.
func Impls() []Impl {
	return append([]Impl{
		{Name: Baseline, Peer: true, New: newXRate},
		{Name: "uber-ratelimit", Peer: true, Blocks: true, New: newUber},
		{Name: "juju-ratelimit", Peer: true, New: newJuju},
		{Name: "throttled-gcra", Peer: true, New: newThrottled},
		{Name: "mutex-bucket", Peer: true, New: newMutexBucket},
	}, ours...)
}

// ours lists cellrate's limiters (ours.go).
var ours []Impl

// epoch is the time.Time an injected nanosecond count 0 maps to.
var epoch = time.Unix(1_700_000_000, 0)

func at(now int64) time.Time { return epoch.Add(time.Duration(now)) }

type xrate struct{ l *rate.Limiter }

func newXRate(r float64, burst int64) Limiter {
	return xrate{rate.NewLimiter(rate.Limit(r), int(burst))}
}

func (x xrate) Allow() bool                { return x.l.Allow() }
func (x xrate) AllowNAt(now, n int64) bool { return x.l.AllowN(at(now), int(n)) }

// injected is a clock for the peers that read time through an interface
// instead of taking it per call: AllowNAt sets it just before the call.
type injected struct{ now atomic.Int64 }

func (c *injected) Now() time.Time        { return at(c.now.Load()) }
func (c *injected) Sleep(d time.Duration) { c.now.Add(int64(d)) }

// uber never denies: Take waits until the request fits.
type uber struct {
	real, fake ratelimit.Limiter
	clock      *injected
}

func newUber(r float64, burst int64) Limiter {
	c := new(injected)
	slack := ratelimit.WithSlack(int(burst))
	return &uber{real: ratelimit.New(int(r), slack), fake: ratelimit.New(int(r), slack, ratelimit.WithClock(c)), clock: c}
}

func (u *uber) Allow() bool { u.real.Take(); return true }

func (u *uber) AllowNAt(now, n int64) bool {
	u.clock.now.Store(now)
	for range n {
		u.fake.Take()
	}
	return true
}

type jujuBucket struct {
	real, fake *juju.Bucket
	clock      *injected
}

func newJuju(r float64, burst int64) Limiter {
	c := new(injected)
	return &jujuBucket{real: juju.NewBucketWithRate(r, burst), fake: juju.NewBucketWithRateAndClock(r, burst, c), clock: c}
}

func (j *jujuBucket) Allow() bool { return j.real.TakeAvailable(1) == 1 }

func (j *jujuBucket) AllowNAt(now, n int64) bool {
	j.clock.now.Store(now)
	_, ok := j.fake.TakeMaxDuration(n, 0)
	return ok
}

// gcraStore is a one-key GCRAStoreCtx on an atomic int64 — the cheapest
// store throttled can have — with a real or an injected clock.
type gcraStore struct {
	tat   atomic.Int64
	clock func() time.Time
}

func (s *gcraStore) GetWithTime(context.Context, string) (int64, time.Time, error) {
	return s.tat.Load(), s.clock(), nil
}

func (s *gcraStore) SetIfNotExistsWithTTL(_ context.Context, _ string, v int64, _ time.Duration) (bool, error) {
	return s.tat.CompareAndSwap(-1, v), nil
}

func (s *gcraStore) CompareAndSwapWithTTL(_ context.Context, _ string, old, v int64, _ time.Duration) (bool, error) {
	return s.tat.CompareAndSwap(old, v), nil
}

type throttledGCRA struct {
	real, fake *throttled.GCRARateLimiterCtx
	clock      *injected
}

func newThrottled(r float64, burst int64) Limiter {
	c := new(injected)
	// throttled admits MaxBurst+1 units at once.
	quota := throttled.RateQuota{MaxRate: throttled.PerDuration(1, time.Duration(float64(time.Second)/r)), MaxBurst: int(burst) - 1}
	mk := func(clock func() time.Time) *throttled.GCRARateLimiterCtx {
		s := &gcraStore{clock: clock}
		s.tat.Store(-1)
		l, err := throttled.NewGCRARateLimiterCtx(s, quota)
		if err != nil {
			panic(err)
		}
		l.SetMaxCASAttemptsLimit(1 << 30)
		return l
	}
	return &throttledGCRA{real: mk(time.Now), fake: mk(c.Now), clock: c}
}

func (t *throttledGCRA) Allow() bool {
	limited, _, _ := t.real.RateLimitCtx(context.Background(), "", 1)
	return !limited
}

func (t *throttledGCRA) AllowNAt(now, n int64) bool {
	t.clock.now.Store(now)
	limited, _, _ := t.fake.RateLimitCtx(context.Background(), "", int(n))
	return !limited
}

// mutexBucket is the textbook token bucket behind a mutex, in float64
// tokens and nanoseconds: the baseline every lock-free design must beat.
type mutexBucket struct {
	mu            sync.Mutex
	tokens, burst float64
	perNS         float64
	last          int64
	started       bool
}

func newMutexBucket(r float64, burst int64) Limiter {
	return &mutexBucket{tokens: float64(burst), burst: float64(burst), perNS: r / 1e9}
}

func (m *mutexBucket) Allow() bool { return m.AllowNAt(time.Since(epoch).Nanoseconds(), 1) }

func (m *mutexBucket) AllowNAt(now, n int64) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.started {
		m.started, m.last = true, now
	}
	if now > m.last {
		m.tokens = min(m.burst, m.tokens+float64(now-m.last)*m.perNS)
		m.last = now
	}
	if m.tokens < float64(n) {
		return false
	}
	m.tokens -= float64(n)
	return true
}
