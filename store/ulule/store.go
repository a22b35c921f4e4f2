package ulule

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cellrate/cellrate/internal/wallclock"
	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/nanotime"
	limiter "github.com/ulule/limiter/v3"
)

// Options are New's input: fixed sizes in place of the memory store's
// map and its clean-up goroutine.
type Options struct {
	// Capacity is the number of keys each Rate holds at once, in fixed
	// memory (24 bytes a key). Default 65,536.
	Capacity int
	// MaxRates is the number of distinct Rates (limit and period) the store
	// decides, each a table of Capacity keys. Default 8; a call with one
	// more returns ErrTooManyRates.
	MaxRates int
	// MaxResets is the number of keys Reset remembers at once. Default
	// 65,536; past it, a Reset forgets a key whose bucket is full again
	// under every Rate (it goes back to its state before its Reset, which
	// admits no more), or returns ErrTooManyResets.
	MaxResets int
}

// ErrTooManyRates is returned for a Rate past Options.MaxRates.
var ErrTooManyRates = errors.New("ulule: more distinct rates than MaxRates")

// ErrNegativeCount is returned by Increment for a count below zero.
var ErrNegativeCount = errors.New("ulule: negative count")

// ErrTooManyResets is returned by Reset, which then changes nothing, when
// MaxResets keys are remembered and none of those it checked is paid up.
var ErrTooManyResets = errors.New("ulule: MaxResets keys reset and still owing")

// ErrZeroValue is what a Store not made by New (the zero Store) returns
// from every call: it denies.
var ErrZeroValue = errors.New("ulule: a Store not made by New; it denies")

// Store is a limiter.Store on cellrate's keyed tables. Its methods are
// safe for concurrent use. Make one with New: the zero Store refuses every
// call with ErrZeroValue.
type Store struct {
	capacity int
	maxRates int
	wall     wallclock.Offset // nanotime to Unix ns, for Reset

	mu     sync.Mutex
	tables atomic.Pointer[map[rateKey]*table]

	resets resets
}

type rateKey struct {
	limit  int64
	period time.Duration
}

var _ limiter.Store = (*Store)(nil)

// New returns a Store. A parameter out of range is a *limit.ParamError
// naming it (a Rate's, when its table is first made).
func New(o Options) (*Store, error) {
	for _, c := range []struct {
		param string
		v     int
	}{{"max rates", o.MaxRates}, {"max resets", o.MaxResets}} {
		if c.v < 0 {
			return nil, &limit.ParamError{Pkg: "ulule", Param: c.param, Value: c.v, Min: 0, Reason: "0 is the default"}
		}
	}
	s := &Store{
		capacity: orDefault(o.Capacity, 1<<16),
		maxRates: orDefault(o.MaxRates, 8),
	}
	if _, err := newTable(1, time.Second, s.capacity); err != nil {
		return nil, err
	}
	s.tables.Store(&map[rateKey]*table{})
	s.resets.init(orDefault(o.MaxResets, 1<<16))
	return s, nil
}

func orDefault(v, d int) int {
	if v != 0 {
		return v
	}
	return d
}

// tableFor returns rate's table, made on its first use.
func (s *Store) tableFor(rate limiter.Rate) (*table, error) {
	k := rateKey{rate.Limit, rate.Period}
	if s.tables.Load() == nil {
		return nil, ErrZeroValue
	}
	if t, ok := (*s.tables.Load())[k]; ok {
		return t, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old := *s.tables.Load()
	if t, ok := old[k]; ok {
		return t, nil
	}
	if len(old) >= s.maxRates {
		if _, err := newTable(rate.Limit, rate.Period, 4); err != nil {
			return nil, err // a bad parameter is named even when full
		}
		return nil, ErrTooManyRates
	}
	t, err := newTable(rate.Limit, rate.Period, s.capacity)
	if err != nil {
		return nil, err
	}
	next := make(map[rateKey]*table, len(old)+1)
	for k, v := range old {
		next[k] = v
	}
	next[k] = t
	s.tables.Store(&next)
	return t, nil
}

// Get takes one unit for key: Increment(ctx, key, 1, rate).
func (s *Store) Get(ctx context.Context, key string, rate limiter.Rate) (limiter.Context, error) {
	return s.Increment(ctx, key, 1, rate)
}

// Increment takes count units for key if all of them are there, and
// reports Reached (taking nothing) if not. Remaining is what is left after
// an admission and 0 after a denial; Reset, in Unix seconds, is when the
// key's bucket is full again. A count of 0 is Peek.
func (s *Store) Increment(_ context.Context, key string, count int64, rate limiter.Rate) (limiter.Context, error) {
	if count < 0 {
		return limiter.Context{}, ErrNegativeCount
	}
	t, err := s.tableFor(rate)
	if err != nil {
		return limiter.Context{}, err
	}
	k, locked := s.resets.acquire(key)
	defer s.resets.release(locked)
	now := nanotime.Now()
	if count == 0 {
		rem := t.remaining(k, now)
		return s.context(t, now, rem, rem == 0), nil
	}
	ok, rem, err := t.take(k, now, count)
	if err != nil {
		return limiter.Context{}, err
	}
	c := s.context(t, now, rem, !ok)
	if !ok {
		c.Remaining = 0
	}
	return c, nil
}

// Peek returns key's Context without taking anything. Reached says that
// a Get now would be refused (no unit remains).
func (s *Store) Peek(_ context.Context, key string, rate limiter.Rate) (limiter.Context, error) {
	t, err := s.tableFor(rate)
	if err != nil {
		return limiter.Context{}, err
	}
	k, locked := s.resets.acquire(key)
	defer s.resets.release(locked)
	now := nanotime.Now()
	rem := t.remaining(k, now)
	return s.context(t, now, rem, rem == 0), nil
}

// Reset starts key afresh under every Rate: a full bucket. With MaxResets
// keys remembered, it forgets one whose bucket is full again under every
// Rate, or returns ErrTooManyResets and changes nothing.
func (s *Store) Reset(_ context.Context, key string, rate limiter.Rate) (limiter.Context, error) {
	t, err := s.tableFor(rate)
	if err != nil {
		return limiter.Context{}, err
	}
	k, done, ok := s.resets.bump(key, s.paid)
	if !ok {
		return limiter.Context{}, ErrTooManyResets
	}
	defer done()
	now := nanotime.Now()
	rem := t.remaining(k, now)
	return s.context(t, now, rem, rem == 0), nil
}

// paid reports whether name's bucket is full now under every Rate: from
// now on it decides as a fresh name does.
func (s *Store) paid(name string) bool {
	now := nanotime.Now()
	for _, t := range *s.tables.Load() {
		if uint64(t.remaining(name, now)) < t.limit {
			return false
		}
	}
	return true
}

func (s *Store) context(t *table, now, remaining int64, reached bool) limiter.Context {
	full := s.wall.Unix(now) + t.untilFull(remaining)
	return limiter.Context{
		Limit:     int64(t.limit),
		Remaining: remaining,
		Reset:     (full + int64(time.Second) - 1) / int64(time.Second),
		Reached:   reached,
	}
}
