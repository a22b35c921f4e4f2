package bench

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/go-chi/httprate"
	"github.com/sethvargo/go-limiter/memorystore"
	ulule "github.com/ulule/limiter/v3"
	ululemem "github.com/ulule/limiter/v3/drivers/store/memory"

	"github.com/cellrate/cellrate/store/chirate"
	"github.com/cellrate/cellrate/store/golimiter"
	cellulule "github.com/cellrate/cellrate/store/ulule"
)

// A StorePair is one of cellrate's stores for a limiter library and the
// store that library ships, which it replaces: each decides as the
// library's middleware asks its store to, for keys, at a rate no key
// reaches (admitting), at its own clock.
type StorePair struct {
	Name       string // the library
	Ours, Base func(keys int) (KeyedLimiter, error)
}

// The admitting limits the stores are given: StoreEvents per
// StorePeriod for the token stores; for httprate's window counters,
// StoreWindowLimit per StorePeriod, under the most cellrate's counter
// counts exactly (chirate.MaxCount/2).
const (
	StoreEvents      = 30000
	StorePeriod      = 10 * time.Millisecond
	StoreWindowLimit = 100_000
	storeWindow      = time.Second
)

// StorePairs returns the three stores against the ones they replace.
func StorePairs() []StorePair {
	return []StorePair{
		{"sethvargo/go-limiter", newGolimiterStore, newMemorystore},
		{"ulule/limiter", newUluleStore, newUluleMemory},
		{"go-chi/httprate", newChirate, newHTTPRateLocal},
	}
}

// storeCapacity is the table size each cellrate store is given for keys:
// 4 slots a key, as the stores' own benchmarks give them, room enough for
// httprate's counter, which refuses a new key rather than evict one that
// still counts.
func storeCapacity(keys int) int { return 4 * keys }

func newGolimiterStore(keys int) (KeyedLimiter, error) {
	s, err := golimiter.New(&golimiter.Config{Tokens: StoreEvents, Interval: StorePeriod, Capacity: storeCapacity(keys)})
	if err != nil {
		return nil, err
	}
	return sethvargo{s}, nil
}

func newMemorystore(int) (KeyedLimiter, error) {
	s, err := memorystore.New(&memorystore.Config{Tokens: StoreEvents, Interval: StorePeriod})
	if err != nil {
		return nil, err
	}
	return sethvargo{s}, nil
}

// ululeStore is a ulule/limiter Store deciding as the limiter's Get does:
// the store's Get with the limiter's Rate.
type ululeStore struct{ s ulule.Store }

var storeRate = ulule.Rate{Limit: StoreEvents, Period: StorePeriod}

func (u ululeStore) Allow(key string) bool {
	c, err := u.s.Get(context.Background(), key, storeRate)
	return err == nil && !c.Reached
}

func newUluleStore(keys int) (KeyedLimiter, error) {
	s, err := cellulule.New(cellulule.Options{Capacity: storeCapacity(keys)})
	if err != nil {
		return nil, err
	}
	return ululeStore{s}, nil
}

func newUluleMemory(int) (KeyedLimiter, error) { return ululeStore{ululemem.NewStore()}, nil }

// windowCounter is an httprate.LimitCounter deciding as httprate's
// RateLimiter.OnLimit does (without the HTTP headers): under the
// limiter's mutex, Get of the current and previous windows, the
// sliding-window estimate, then IncrementBy if the request fits.
type windowCounter struct {
	mu sync.Mutex
	c  httprate.LimitCounter
}

func newWindowCounter(c httprate.LimitCounter) *windowCounter {
	c.Config(StoreWindowLimit, storeWindow)
	return &windowCounter{c: c}
}

func (w *windowCounter) Allow(key string) bool {
	now := time.Now().UTC()
	cur := now.Truncate(storeWindow)
	w.mu.Lock()
	defer w.mu.Unlock()
	curr, prev, err := w.c.Get(key, cur, cur.Add(-storeWindow))
	if err != nil {
		return false
	}
	left := float64(storeWindow - now.Sub(cur))
	rate := float64(prev)*left/float64(storeWindow) + float64(curr)
	if int(math.Round(rate))+1 > StoreWindowLimit {
		return false
	}
	return w.c.IncrementBy(key, cur, 1) == nil
}

func newChirate(keys int) (KeyedLimiter, error) {
	c, err := chirate.New(chirate.Options{Capacity: storeCapacity(keys)})
	if err != nil {
		return nil, err
	}
	return newWindowCounter(c), nil
}

func newHTTPRateLocal(int) (KeyedLimiter, error) {
	return newWindowCounter(httprate.NewLocalLimitCounter(storeWindow)), nil
}
