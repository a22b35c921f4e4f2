package ululeredis

import (
	"context"
	"errors"
	"math/bits"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/redis"
	limiter "github.com/ulule/limiter/v3"
)

// ErrTooManyRates is returned for a Rate past Options.MaxRates.
var ErrTooManyRates = errors.New("ululeredis: more distinct rates than MaxRates")

// ErrNegativeCount is returned by Increment for a count below zero.
var ErrNegativeCount = errors.New("ululeredis: negative count")

// Options are New's input.
type Options struct {
	// Prefix starts every Redis key the store writes (default "limiter").
	// Each Rate adds its limit and period, so Rates never share a key.
	Prefix string
	// MaxRates is the number of distinct Rates the store decides. Default
	// 8; a call with one more returns ErrTooManyRates.
	MaxRates int
	// Redis are options for every limiter the store makes (WithTimeout,
	// WithGrace).
	Redis []redis.Option
}

// ErrZeroValue is what a Store not made by New (the zero Store) returns
// from every call: it denies.
var ErrZeroValue = errors.New("ululeredis: a Store not made by New; it denies")

// Store is a limiter.Store whose keys live in Redis, decided by the redis
// module's GCRA. Its methods are safe for concurrent use. Make one with New:
// the zero Store refuses every call with ErrZeroValue.
type Store struct {
	c        redis.Client
	o        Options
	mu       sync.Mutex
	limiters atomic.Pointer[map[rateKey]*limiterOf]
}

type rateKey struct {
	limit  int64
	period time.Duration
}

type limiterOf struct {
	l             *redis.Limiter
	limit, period uint64
}

var _ limiter.Store = (*Store)(nil)

// New returns a Store on client c (a go-redis v9 client, cluster client
// or ring). A nil client is a *limit.ParamError.
func New(c redis.Client, o Options) (*Store, error) {
	if c == nil {
		return nil, &limit.ParamError{Pkg: "ululeredis", Param: "client", Value: c, Reason: "the client must not be nil"}
	}
	if o.Prefix == "" {
		o.Prefix = limiter.DefaultPrefix
	}
	if o.MaxRates == 0 {
		o.MaxRates = 8
	}
	s := &Store{c: c, o: o}
	s.limiters.Store(&map[rateKey]*limiterOf{})
	return s, nil
}

// limiterFor returns rate's limiter, made on its first use.
func (s *Store) limiterFor(rate limiter.Rate) (*limiterOf, error) {
	k := rateKey{rate.Limit, rate.Period}
	if s.limiters.Load() == nil {
		return nil, ErrZeroValue
	}
	if l, ok := (*s.limiters.Load())[k]; ok {
		return l, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old := *s.limiters.Load()
	if l, ok := old[k]; ok {
		return l, nil
	}
	prefix := s.o.Prefix + ":" + strconv.FormatInt(rate.Limit, 10) + "/" + strconv.FormatInt(int64(rate.Period), 10) + ":"
	l, err := redis.NewGCRA(s.c, prefix, rate.Limit, rate.Period, rate.Limit, s.o.Redis...)
	if err != nil {
		return nil, err
	}
	if len(old) >= s.o.MaxRates {
		return nil, ErrTooManyRates
	}
	next := make(map[rateKey]*limiterOf, len(old)+1)
	for k, v := range old {
		next[k] = v
	}
	next[k] = &limiterOf{l, uint64(rate.Limit), uint64(rate.Period)}
	s.limiters.Store(&next)
	return next[k], nil
}

// Get takes one unit for key: Increment(ctx, key, 1, rate).
func (s *Store) Get(ctx context.Context, key string, rate limiter.Rate) (limiter.Context, error) {
	return s.Increment(ctx, key, 1, rate)
}

// Increment takes count units for key if all of them are there, and
// reports Reached (taking nothing) if not, in one round trip. Remaining is
// what is left after an admission and 0 after a denial; Reset, in Unix
// seconds, is when the key's bucket is full again. A count of 0 is Peek.
// An error from Redis is returned with it (the middleware answers 500).
func (s *Store) Increment(ctx context.Context, key string, count int64, rate limiter.Rate) (limiter.Context, error) {
	if count < 0 {
		return limiter.Context{}, ErrNegativeCount
	}
	l, err := s.limiterFor(rate)
	if err != nil {
		return limiter.Context{}, err
	}
	r, err := l.l.AllowN(ctx, key, count)
	switch {
	case errors.Is(err, limit.ErrCostExceedsBurst):
		return l.context(0, true), nil
	case err != nil:
		return limiter.Context{}, err
	case !r.OK:
		return l.context(0, true), nil
	}
	return l.context(r.Remaining, count == 0 && r.Remaining == 0), nil
}

// Peek returns key's Context without taking anything. Reached says that
// a Get now would be refused (no unit remains).
func (s *Store) Peek(ctx context.Context, key string, rate limiter.Rate) (limiter.Context, error) {
	return s.Increment(ctx, key, 0, rate)
}

// Reset removes key's state under rate: a full bucket.
func (s *Store) Reset(ctx context.Context, key string, rate limiter.Rate) (limiter.Context, error) {
	l, err := s.limiterFor(rate)
	if err != nil {
		return limiter.Context{}, err
	}
	if err := l.l.Reset(ctx, key); err != nil {
		return limiter.Context{}, err
	}
	return s.Peek(ctx, key, rate)
}

// context is the Context for remaining units, with Reset when the bucket
// is full again: ceil((limit-remaining) * period / limit) from now.
func (l *limiterOf) context(remaining int64, reached bool) limiter.Context {
	var wait int64
	if d := l.limit - uint64(max(remaining, 0)); d > 0 && uint64(remaining) < l.limit {
		hi, lo := bits.Mul64(d, l.period)
		q, r := bits.Div64(hi, lo, l.limit) // hi < limit: d*period/limit <= period
		if r != 0 {
			q++
		}
		wait = int64(q)
	}
	full := time.Now().UnixNano() + wait
	return limiter.Context{
		Limit:     int64(l.limit),
		Remaining: remaining,
		Reset:     (full + int64(time.Second) - 1) / int64(time.Second),
		Reached:   reached,
	}
}
