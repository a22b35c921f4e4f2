package bench

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/go-chi/httprate"
	sethlimiter "github.com/sethvargo/go-limiter"
	"github.com/sethvargo/go-limiter/memorystore"
	ulule "github.com/ulule/limiter/v3"
	ululemem "github.com/ulule/limiter/v3/drivers/store/memory"
	"golang.org/x/time/rate"

	"github.com/cellrate/cellrate/keyed"
	"github.com/cellrate/cellrate/nanotime"
)

// A KeyedLimiter decides for one key at the real clock, as each library
// does by default.
type KeyedLimiter interface {
	Allow(key string) bool
}

// The per-key limit every keyed limiter is given: KeyedEvents per
// KeyedPeriod, bursts of KeyedEvents (a window of KeyedPeriod for the
// window counters).
const (
	KeyedEvents = 100
	KeyedPeriod = time.Second
)

// KeyedImpl names a keyed limiter and makes one sized for keys.
type KeyedImpl struct {
	Name string
	New  func(keys int) KeyedLimiter
}

// KeyedImpls returns cellrate's keyed tables and the peers.
func KeyedImpls() []KeyedImpl {
	return []KeyedImpl{
		{"keyed", newKeyed},
		{"keyed-window", newKeyedWindow},
		{"keyed-coarse", newKeyedCoarse},
		{"syncmap-xrate", func(int) KeyedLimiter { return &syncMapRate{} }},
		{"mutexmap-xrate", func(int) KeyedLimiter { return &mutexMapRate{m: map[string]*rate.Limiter{}} }},
		{"sethvargo", newSethvargo},
		{"httprate", newHTTPRate},
		{"ulule", newUlule},
		{"holdup", func(int) KeyedLimiter { return &holdUp{buckets: map[string]*holdUpBucket{}} }},
	}
}

// KeyedCapacity is the table size keyed is given for keys: 5/4 slots a
// key, 22.5 bytes a key.
func KeyedCapacity(keys int) int { return keys * 5 / 4 }

// coarse is the cached clock keyed-coarse reads (1ms resolution).
var coarse nanotime.Coarse

// newKeyedCoarse is keyed reading nanotime.Coarse instead of nanotime.Now.
func newKeyedCoarse(keys int) KeyedLimiter {
	t, err := keyed.New(KeyedEvents, KeyedPeriod, KeyedEvents, keyed.WithCapacity(KeyedCapacity(keys)), keyed.WithClock(coarse.Now))
	if err != nil {
		panic(err)
	}
	return keyedTable{t}
}

type keyedTable struct{ t *keyed.Table }

func (k keyedTable) Allow(key string) bool { return k.t.Allow(key) }

func newKeyed(keys int) KeyedLimiter {
	t, err := keyed.New(KeyedEvents, KeyedPeriod, KeyedEvents, keyed.WithCapacity(KeyedCapacity(keys)))
	if err != nil {
		panic(err)
	}
	return keyedTable{t}
}

func newKeyedWindow(keys int) KeyedLimiter {
	t, err := keyed.NewWindow(KeyedEvents, KeyedPeriod, keyed.WithCapacity(KeyedCapacity(keys)))
	if err != nil {
		panic(err)
	}
	return keyedTable{t}
}

// syncMapRate is the hand-rolled pattern: a sync.Map of *rate.Limiter.
type syncMapRate struct{ m sync.Map }

func (s *syncMapRate) Allow(key string) bool {
	l, ok := s.m.Load(key)
	if !ok {
		l, _ = s.m.LoadOrStore(key, rate.NewLimiter(rate.Every(KeyedPeriod/KeyedEvents), KeyedEvents))
	}
	return l.(*rate.Limiter).Allow()
}

// mutexMapRate is the other hand-rolled pattern: a map of *rate.Limiter
// behind a mutex.
type mutexMapRate struct {
	mu sync.Mutex
	m  map[string]*rate.Limiter
}

func (s *mutexMapRate) Allow(key string) bool {
	s.mu.Lock()
	l, ok := s.m[key]
	if !ok {
		l = rate.NewLimiter(rate.Every(KeyedPeriod/KeyedEvents), KeyedEvents)
		s.m[key] = l
	}
	s.mu.Unlock()
	return l.Allow()
}

// sethvargo is github.com/sethvargo/go-limiter's memorystore.
type sethvargo struct{ s sethlimiter.Store }

func newSethvargo(int) KeyedLimiter {
	s, err := memorystore.New(&memorystore.Config{Tokens: KeyedEvents, Interval: KeyedPeriod})
	if err != nil {
		panic(err)
	}
	return sethvargo{s}
}

func (s sethvargo) Allow(key string) bool {
	_, _, _, ok, _ := s.s.Take(context.Background(), key)
	return ok
}

// httpRate is github.com/go-chi/httprate's in-memory counter, decided as
// its RateLimiter.OnLimit decides (without the HTTP headers): the
// sliding-window estimate and the increment under the limiter's mutex.
type httpRate struct {
	mu sync.Mutex
	rl *httprate.RateLimiter
	c  httprate.LimitCounter
}

func newHTTPRate(int) KeyedLimiter {
	rl := httprate.NewRateLimiter(KeyedEvents, KeyedPeriod)
	return &httpRate{rl: rl, c: rl.Counter()}
}

func (h *httpRate) Allow(key string) bool {
	window := time.Now().UTC().Truncate(KeyedPeriod)
	h.mu.Lock()
	defer h.mu.Unlock()
	_, r, err := h.rl.Status(key)
	if err != nil || int(math.Round(r))+1 > KeyedEvents {
		return false
	}
	return h.c.IncrementBy(key, window, 1) == nil
}

// ululeLimiter is github.com/ulule/limiter/v3's memory store.
type ululeLimiter struct{ l *ulule.Limiter }

func newUlule(int) KeyedLimiter {
	return ululeLimiter{ulule.New(ululemem.NewStore(), ulule.Rate{Period: KeyedPeriod, Limit: KeyedEvents})}
}

func (u ululeLimiter) Allow(key string) bool {
	c, err := u.l.Get(context.Background(), key)
	return err == nil && !c.Reached
}

// holdUp is seed 003's HoldUp design: a map of key to a mutex-protected
// token bucket, behind an RWMutex with double-checked creation, refilled
// lazily from the elapsed time (clamped at zero).
type holdUp struct {
	mu      sync.RWMutex
	buckets map[string]*holdUpBucket
}

type holdUpBucket struct {
	mu       sync.Mutex
	tokens   float64
	capacity float64
	rate     float64 // tokens per second
	last     time.Time
}

func (h *holdUp) Allow(key string) bool {
	h.mu.RLock()
	b, ok := h.buckets[key]
	h.mu.RUnlock()
	if !ok {
		h.mu.Lock()
		if b, ok = h.buckets[key]; !ok {
			b = &holdUpBucket{tokens: KeyedEvents, capacity: KeyedEvents, rate: KeyedEvents / KeyedPeriod.Seconds(), last: time.Now()}
			h.buckets[key] = b
		}
		h.mu.Unlock()
	}
	return b.allow()
}

func (b *holdUpBucket) allow() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	elapsed := max(0, now.Sub(b.last).Seconds())
	b.tokens = min(b.capacity, b.tokens+elapsed*b.rate)
	b.last = now
	if b.tokens >= 1 {
		b.tokens--
		return true
	}
	return false
}
