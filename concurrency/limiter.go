package concurrency

import (
	"context"
	"errors"
	"math"
	"sync/atomic"

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
	alg      algorithm // nil for a fixed limit
	min, max float64
	minWin   int64
	maxWin   int64
	minN     int64
	clock    nanotime.Clock
	s        sampler
	w        waiters
}

// NewFixed returns a Limiter with a fixed limit of n in flight, n in
// [1, 1<<20]: a bulkhead. It holds 16 bytes per unit of n. Of the options
// it takes WithClock; WithLimits and WithWindow do nothing, and the
// algorithm options are refused (a fixed limit does not move).
func NewFixed(n int, opts ...Option) (*Limiter, error) {
	if n < 1 || n > maxLimit {
		return nil, &limit.ParamError{Pkg: "concurrency", Param: "limit", Value: n, Min: 1, Max: maxLimit}
	}
	c, err := configure(append(opts, WithLimits(n, n, n)))
	if err != nil {
		return nil, err
	}
	if c.tune.set != 0 {
		return nil, &limit.ParamError{Pkg: "concurrency", Param: "option", Value: "an algorithm option",
			Reason: "NewFixed's limit does not move: use New to pick an algorithm"}
	}
	return build(c, nil), nil
}

const maxLimit = 1 << 20

// New returns a Limiter whose limit an adaptive algorithm moves after each
// sampling window: Vegas, unless WithGradient or WithAIMD picks another
// (the last such option wins). It returns a *limit.ParamError for limits
// outside 1 <= min <= initial <= max <= 1<<20, windows outside
// 0 < minDur <= maxDur, minSamples below 1, a nil clock or Option, an
// algorithm's parameter out of its documented range, or WithSmoothing or
// WithHistory with AIMD.
func New(opts ...Option) (*Limiter, error) {
	c, err := configure(opts)
	if err != nil {
		return nil, err
	}
	alg, err := c.algorithm()
	if err != nil {
		return nil, err
	}
	return build(c, alg), nil
}

// build makes a Limiter of a checked configuration; alg nil keeps the
// initial limit.
func build(c config, alg algorithm) *Limiter {
	l := &Limiter{slots: newSlots(c.max), alg: alg, min: float64(c.min), max: float64(c.max),
		minWin: int64(c.minWin), maxWin: int64(c.maxWin), minN: int64(c.minN), clock: c.clock}
	l.limit.Store(f64(float64(c.initial)))
	l.fell.Store(math.MinInt64)
	l.s.init(c.clock())
	return l
}

// Limit returns the current limit: at most this many requests are admitted
// in flight at once (fewer while in-flight ones from before a decrease are
// still out).
func (l *Limiter) Limit() int { return int(math.Float64frombits(l.limit.Load())) }

// limitFloat returns the current limit before rounding down: the
// algorithms move it by fractions.
func (l *Limiter) limitFloat() float64 { return math.Float64frombits(l.limit.Load()) }

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
