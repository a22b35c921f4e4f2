package golimiter

import (
	"context"
	"errors"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cellrate/cellrate/internal/wallclock"
	"github.com/cellrate/cellrate/nanotime"
	limiter "github.com/sethvargo/go-limiter"
)

// Config is New's input: the default limit, as memorystore.Config's, and
// the fixed sizes that replace its map and sweeper.
type Config struct {
	// Tokens is the number of tokens per Interval and the burst: a key
	// may take Tokens at once, then one token each Interval/Tokens.
	// Default 1; at most one token a nanosecond (Tokens at most
	// Interval in ns), else New returns a *limit.ParamError.
	Tokens uint64
	// Interval is the time Tokens take to refill. Default 1 second.
	Interval time.Duration
	// Capacity is the number of keys the default limit holds at once, in
	// fixed memory (24 bytes a key). Default 65,536.
	Capacity int
	// MaxSet is the number of keys Set may give limits of their own.
	// Default 1,024; Set beyond it returns ErrTooMany.
	MaxSet int
	// MaxLimits is the number of distinct (tokens, interval) pairs Set may
	// use, each a table of 2*MaxSet slots. Default 8.
	MaxLimits int
	// MaxBurst is the number of keys that may hold Burst's extra tokens
	// at once. Default 1,024; Burst beyond it returns ErrTooMany.
	MaxBurst int
}

// ErrTooMany is returned by Set and Burst when the fixed room Config gave
// them is full.
var ErrTooMany = errors.New("golimiter: no room for another key's own limit or extra tokens")

// Store is a limiter.Store on cellrate's keyed tables. Its methods are
// safe for concurrent use. Make one with New: the zero Store is as if
// closed, every call but Close returning limiter.ErrStopped.
type Store struct {
	def     *table
	now     func() int64     // nanotime.Now; tests freeze it
	wall    wallclock.Offset // nanotime to Unix ns, for reset
	stopped atomic.Bool

	setMu  sync.Mutex   // held by Set
	nset   atomic.Int64 // keys in sets
	sets   sync.Map     // string -> *table
	limMu  sync.Mutex
	limits map[limitKey]*table
	maxSet int
	maxLim int

	extra extra
}

type limitKey struct {
	tokens   uint64
	interval time.Duration
}

var _ limiter.Store = (*Store)(nil)

// New returns a Store holding c's default limit. A nil c is the zero
// Config (1 token a second). A parameter out of range is a
// *limit.ParamError naming it.
func New(c *Config) (*Store, error) {
	if c == nil {
		c = new(Config)
	}
	tokens, interval := c.Tokens, c.Interval
	if tokens == 0 {
		tokens = 1
	}
	if interval <= 0 {
		interval = time.Second
	}
	def, err := newTable(tokens, interval, c.Capacity)
	if err != nil {
		return nil, err
	}
	s := &Store{
		def:    def,
		now:    nanotime.Now,
		limits: make(map[limitKey]*table),
		maxSet: orDefault(c.MaxSet, 1024),
		maxLim: orDefault(c.MaxLimits, 8),
	}
	s.extra.init(orDefault(c.MaxBurst, 1024))
	return s, nil
}

func orDefault(v, d int) int {
	if v > 0 {
		return v
	}
	return d
}

// tableOf returns the table deciding key: its own from Set, or the default.
func (s *Store) tableOf(key string) *table {
	if s.nset.Load() != 0 {
		if t, ok := s.sets.Load(key); ok {
			return t.(*table)
		}
	}
	return s.def
}

// Take takes one token for key: Burst's extra tokens first, then the
// bucket. reset is the wall-clock time, in Unix ns, at which the bucket is
// full again after an admission, or holds a token again after a denial.
// Decisions run on the monotonic clock; reset follows a step of the wall
// clock within a second.
func (s *Store) Take(_ context.Context, key string) (tokens, remaining, reset uint64, ok bool, err error) {
	if s.stopped.Load() || s.def == nil {
		return 0, 0, 0, false, limiter.ErrStopped
	}
	now := s.now()
	t := s.tableOf(key)
	if took, left := s.extra.take(key, now); took {
		rem := t.remaining(key, now)
		return t.tokens, addSat(rem, left), s.unix(now, t.untilFull(rem)), true, nil
	}
	ok, rem, wait, err := t.take(key, now)
	if err != nil {
		return 0, 0, 0, false, err
	}
	if ok {
		wait = t.untilFull(rem)
	}
	return t.tokens, rem, s.unix(now, wait), ok, nil
}

// Get returns key's limit and the tokens it could take now, Burst's
// included, without taking any. A key the store holds nothing for has a
// full bucket of the default limit.
func (s *Store) Get(_ context.Context, key string) (tokens, remaining uint64, err error) {
	if s.stopped.Load() || s.def == nil {
		return 0, 0, limiter.ErrStopped
	}
	now := s.now()
	t := s.tableOf(key)
	return t.tokens, addSat(t.remaining(key, now), s.extra.get(key, now)), nil
}

// addSat returns a + b, saturated at the largest uint64 (a Burst grant
// saturates there).
func addSat(a, b uint64) uint64 {
	if sum, carry := bits.Add64(a, b, 0); carry == 0 {
		return sum
	}
	return ^uint64(0)
}

// Set gives key a limit of its own: tokens per interval, with a burst of
// tokens. A key keeps each limit's bucket apart: one never used under
// this limit starts full; one moved back finds its bucket as it left it,
// refilled meanwhile (Set never forgives tokens already taken).
func (s *Store) Set(_ context.Context, key string, tokens uint64, interval time.Duration) error {
	if s.stopped.Load() || s.def == nil {
		return limiter.ErrStopped
	}
	t, err := s.limitTable(tokens, interval)
	if err != nil {
		return err
	}
	// One Set at a time: a Set refused past MaxSet must not undo a
	// concurrent Set of the same key that succeeded.
	s.setMu.Lock()
	defer s.setMu.Unlock()
	_, had := s.sets.Load(key)
	switch {
	case t == s.def:
		if had {
			s.sets.Delete(key)
			s.nset.Add(-1)
		}
		return nil
	case !had && s.nset.Load() >= int64(s.maxSet):
		return ErrTooMany
	case !had:
		s.nset.Add(1)
	}
	s.sets.Store(key, t)
	return nil
}

// limitTable returns the one table of tokens per interval, made on first
// use.
func (s *Store) limitTable(tokens uint64, interval time.Duration) (*table, error) {
	if tokens == s.def.tokens && uint64(interval) == s.def.period {
		return s.def, nil
	}
	s.limMu.Lock()
	defer s.limMu.Unlock()
	k := limitKey{tokens, interval}
	if t, ok := s.limits[k]; ok {
		return t, nil
	}
	if len(s.limits) >= s.maxLim {
		if _, err := newTable(tokens, interval, 4); err != nil {
			return nil, err // a bad parameter is named even when full
		}
		return nil, ErrTooMany
	}
	t, err := newTable(tokens, interval, max(2*s.maxSet, 4))
	if err != nil {
		return nil, err
	}
	s.limits[k] = t
	return t, nil
}

// Burst gives key tokens extra tokens, taken before its bucket, for one
// interval of its limit from now; a second Burst adds to the first and
// restarts the interval.
func (s *Store) Burst(_ context.Context, key string, tokens uint64) error {
	if s.stopped.Load() || s.def == nil {
		return limiter.ErrStopped
	}
	now := s.now()
	return s.extra.add(key, tokens, now, int64(s.tableOf(key).period))
}

// Close stops the store: every later call returns limiter.ErrStopped, and
// the room Set and Burst used is released. A second Close does nothing.
func (s *Store) Close(context.Context) error {
	if !s.stopped.CompareAndSwap(false, true) {
		return nil
	}
	s.sets.Clear()
	s.nset.Store(0)
	s.extra.clear()
	return nil
}

// unix converts a nanotime now plus a wait to Unix ns.
func (s *Store) unix(now, wait int64) uint64 {
	return uint64(max(0, s.wall.Unix(now)+min(wait, 1<<62)))
}
