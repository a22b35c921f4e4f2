package concurrency

import (
	"context"
	"errors"
	"math"
	"sync/atomic"
	"time"

	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/nanotime"
)

// ErrZero is returned by Acquire on a Limiter that was not made by New or
// NewFixed; TryAcquire on one admits nothing.
var ErrZero = errors.New("concurrency: zero Limiter; make one with New or NewFixed")

// Limiter caps the requests in flight. It is safe for concurrent use and
// must not be copied after first use. The zero value admits nothing.
type Limiter struct {
	_        noCopy
	limit    atomic.Uint64 // float64 bits of the current limit
	fell     atomic.Int64  // when the limit last fell
	inflight atomic.Int64
	slots    slots
	alg      Algorithm // nil for a fixed limit
	min, max float64
	minWin   int64
	maxWin   int64
	minN     int64
	clock    nanotime.Clock
	s        sampler
	w        waiters
}

// Option configures a Limiter made by New.
type Option func(*config)

type config struct {
	initial, min, max int
	minWin, maxWin    time.Duration
	minN              int
	clock             nanotime.Clock
}

// WithLimits sets the initial limit and the range the algorithm may move
// it in (by default 10 in [1, 1000]). A Limiter holds 16 bytes per unit of
// max (a table of slots for its tokens).
func WithLimits(initial, min, max int) Option {
	return func(c *config) { c.initial, c.min, c.max = initial, min, max }
}

// WithWindow sets how long a sampling window lasts: at least minDur and
// until minSamples requests were released, at most maxDur (by default
// 1ms, 1s and 10 samples). Between its bounds a window lasts twice the
// mean latency of the window before.
func WithWindow(minDur, maxDur time.Duration, minSamples int) Option {
	return func(c *config) { c.minWin, c.maxWin, c.minN = minDur, maxDur, minSamples }
}

// WithClock makes the plain (non-At) methods read clock instead of
// nanotime.Now.
func WithClock(clock nanotime.Clock) Option { return func(c *config) { c.clock = clock } }

// NewFixed returns a Limiter with a fixed limit of n in flight, n in
// [1, 1<<20]: a bulkhead. It holds 16 bytes per unit of n.
func NewFixed(n int, opts ...Option) (*Limiter, error) {
	if n < 1 || n > maxLimit {
		return nil, &limit.ParamError{Pkg: "concurrency", Param: "limit", Value: n, Min: 1, Max: maxLimit}
	}
	return New(nil, append(opts, WithLimits(n, n, n))...)
}

const maxLimit = 1 << 20

// New returns a Limiter whose limit alg moves after each sampling window
// (a nil alg keeps the initial limit). It returns a *limit.ParamError for
// limits outside 1 <= min <= initial <= max <= 1<<20, windows outside
// 0 < minDur <= maxDur, minSamples below 1, a nil clock, or a parameter of
// a built-in algorithm out of its documented range.
func New(alg Algorithm, opts ...Option) (*Limiter, error) {
	c := config{initial: 10, min: 1, max: 1000, minWin: time.Millisecond, maxWin: time.Second, minN: 10, clock: nanotime.Now}
	for _, o := range opts {
		o(&c)
	}
	if err := c.check(); err != nil {
		return nil, err
	}
	if v, ok := alg.(interface{ check() error }); ok {
		if err := v.check(); err != nil {
			return nil, err
		}
	}
	l := &Limiter{slots: newSlots(c.max), alg: alg, min: float64(c.min), max: float64(c.max),
		minWin: int64(c.minWin), maxWin: int64(c.maxWin), minN: int64(c.minN), clock: c.clock}
	l.limit.Store(f64(float64(c.initial)))
	l.fell.Store(math.MinInt64)
	l.s.init(c.clock())
	return l, nil
}

func (c *config) check() error {
	pe := func(param string, v, lo, hi any) error {
		return &limit.ParamError{Pkg: "concurrency", Param: param, Value: v, Min: lo, Max: hi}
	}
	switch {
	case c.max < 1 || c.max > maxLimit:
		return pe("max", c.max, 1, maxLimit)
	case c.min < 1 || c.min > c.max:
		return pe("min", c.min, 1, c.max)
	case c.initial < c.min || c.initial > c.max:
		return pe("initial", c.initial, c.min, c.max)
	case c.minWin <= 0:
		return pe("minDur", c.minWin, time.Duration(1), nil)
	case c.maxWin < c.minWin:
		return pe("maxDur", c.maxWin, c.minWin, nil)
	case c.minN < 1:
		return pe("minSamples", c.minN, 1, nil)
	case c.clock == nil:
		return &limit.ParamError{Pkg: "concurrency", Param: "clock", Value: nil, Reason: "the clock must not be nil"}
	}
	return nil
}

// Limit returns the current limit: at most this many requests are admitted
// in flight at once (fewer while in-flight ones from before a decrease are
// still out).
func (l *Limiter) Limit() int { return int(math.Float64frombits(l.limit.Load())) }

// LimitFloat returns the current limit before rounding down: adaptive
// algorithms move it by fractions.
func (l *Limiter) LimitFloat() float64 { return math.Float64frombits(l.limit.Load()) }

// InFlight returns the number of tokens acquired and not yet released.
func (l *Limiter) InFlight() int { return int(l.inflight.Load()) }

// TryAcquire is TryAcquireAt with the Limiter's clock.
func (l *Limiter) TryAcquire() (Token, bool) {
	if l.clock == nil {
		return Token{}, false
	}
	return l.TryAcquireAt(l.clock())
}

// TryAcquireAt admits a request at now if fewer than Limit are in flight,
// without waiting. The Token it returns when it admits must be released
// (Token.Release) exactly once; further releases do nothing.
func (l *Limiter) TryAcquireAt(now int64) (Token, bool) {
	n, ok := l.enter()
	if !ok {
		return Token{}, false
	}
	i, gen := l.slots.take()
	return Token{l: l, slot: int32(i), inflight: int32(n), gen: gen, start: now}, true
}

// enter takes one in-flight unit if the count is below the limit, and
// returns the count with it.
func (l *Limiter) enter() (int64, bool) {
	if l.slots == nil {
		return 0, false
	}
	lim := int64(l.Limit())
	for {
		n := l.inflight.Load()
		if n >= lim {
			return n, false
		}
		if l.inflight.CompareAndSwap(n, n+1) {
			return n + 1, true
		}
	}
}

// Acquire waits until a request is admitted or ctx is done. It returns the
// Token, or ctx's error (having taken nothing: a cancelled wait leaves no
// slot behind), or ErrZero. Waiters are admitted first come, first served
// among those woken; a TryAcquire may pass them.
func (l *Limiter) Acquire(ctx context.Context) (Token, error) {
	if l.slots == nil {
		return Token{}, ErrZero
	}
	if t, ok := l.TryAcquire(); ok {
		return t, nil
	}
	return l.wait(ctx)
}

func f64(v float64) uint64 { return math.Float64bits(v) }

// noCopy makes go vet's copylocks check report copies of a Limiter.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}
