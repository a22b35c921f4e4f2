package packed64core

import (
	"sync/atomic"
	"time"

	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/nanotime"
)

// Buckets is a table of token buckets sharing one BucketParams and one
// HighWater: 8 bytes per bucket, for per-key limiters by the million. Its
// methods are safe for concurrent use; i must be in [0, Len()).
//
// The zero Buckets has no buckets (Len 0): as in an empty slice, every i is
// out of range and panics; use NewBuckets. Buckets must not be copied after
// first use (go vet reports copies).
type Buckets struct {
	p     BucketParams
	hw    HighWater
	clock nanotime.Clock
	words []atomic.Uint64
}

// NewBuckets returns count full buckets, each refilled with events tokens
// per period and holding up to burst. A parameter out of range is a
// *limit.ParamError: count must be in [1, 2^32] (2^27 where int has 32
// bits); see NewBucketParams for the others.
func NewBuckets(count int, events int64, period time.Duration, burst int64, opts ...Option) (*Buckets, error) {
	b := new(Buckets)
	if err := b.Init(count, events, period, burst, opts...); err != nil {
		return nil, err
	}
	return b, nil
}

// Init makes b what NewBuckets returns, in place; b must not be in use.
func (b *Buckets) Init(count int, events int64, period time.Duration, burst int64, opts ...Option) error {
	if err := checkCount(count); err != nil {
		return err
	}
	p, err := NewBucketParams(events, period, burst)
	if err != nil {
		return err
	}
	c, err := newConfig(opts)
	if err != nil {
		return err
	}
	b.p, b.clock, b.words = p, c.clock, make([]atomic.Uint64, count)
	return nil
}

// Len returns the number of buckets.
func (b *Buckets) Len() int { return len(b.words) }

// Params returns the buckets' parameters.
func (b *Buckets) Params() BucketParams { return b.p }

// Allow is AllowAt with the table's clock.
func (b *Buckets) Allow(i int) bool { return b.AllowAt(i, readClock(b.clock)) }

// AllowAt reports whether a token may be taken from bucket i at time now,
// and takes it if so.
func (b *Buckets) AllowAt(i int, now int64) bool { return b.p.allow(&b.words[i], &b.hw, now) }

// AllowN is AllowNAt with the table's clock.
func (b *Buckets) AllowN(i int, n int64) (limit.Result, error) {
	return b.AllowNAt(i, readClock(b.clock), n)
}

// AllowNAt takes n tokens from bucket i at time now if all n are available.
func (b *Buckets) AllowNAt(i int, now, n int64) (limit.Result, error) {
	return b.p.allowN(&b.words[i], &b.hw, now, n)
}

// TokensAt returns the tokens bucket i holds at now, with their fraction.
func (b *Buckets) TokensAt(i int, now int64) float64 {
	return b.p.TokensAt(b.p.state(&b.words[i], &b.hw), now)
}

// RemainingAt returns the whole tokens bucket i holds at now.
func (b *Buckets) RemainingAt(i int, now int64) int64 {
	return b.p.RemainingAt(b.p.state(&b.words[i], &b.hw), now)
}

// Windows is a table of sliding-window counters sharing one WindowParams
// and one HighWater: 8 bytes per counter. Its methods are safe for
// concurrent use; i must be in [0, Len()).
//
// The zero Windows has no counters (Len 0): as in an empty slice, every i
// is out of range and panics; use NewWindows. Windows must not be copied
// after first use (go vet reports copies).
type Windows struct {
	p     WindowParams
	hw    HighWater
	clock nanotime.Clock
	words []atomic.Uint64
}

// NewWindows returns count empty counters, each admitting limit units per
// window. A parameter out of range is a *limit.ParamError: count must be
// in [1, 2^32] (2^27 where int has 32 bits); see NewWindowParams for the
// others.
func NewWindows(count int, limit int64, window time.Duration, opts ...Option) (*Windows, error) {
	c := new(Windows)
	if err := c.Init(count, limit, window, opts...); err != nil {
		return nil, err
	}
	return c, nil
}

// Init makes c what NewWindows returns, in place; c must not be in use.
func (c *Windows) Init(count int, limit int64, window time.Duration, opts ...Option) error {
	if err := checkCount(count); err != nil {
		return err
	}
	p, err := NewWindowParams(limit, window)
	if err != nil {
		return err
	}
	cfg, err := newConfig(opts)
	if err != nil {
		return err
	}
	c.p, c.clock, c.words = p, cfg.clock, make([]atomic.Uint64, count)
	return nil
}

// Len returns the number of counters.
func (c *Windows) Len() int { return len(c.words) }

// Params returns the counters' parameters.
func (c *Windows) Params() WindowParams { return c.p }

// Allow is AllowAt with the table's clock.
func (c *Windows) Allow(i int) bool { return c.AllowAt(i, readClock(c.clock)) }

// AllowAt reports whether one unit may be admitted to counter i at time
// now, and admits it if so.
func (c *Windows) AllowAt(i int, now int64) bool { return c.p.allow(&c.words[i], &c.hw, now) }

// AllowN is AllowNAt with the table's clock.
func (c *Windows) AllowN(i int, n int64) (limit.Result, error) {
	return c.AllowNAt(i, readClock(c.clock), n)
}

// AllowNAt admits n units to counter i at time now if all n fit.
func (c *Windows) AllowNAt(i int, now, n int64) (limit.Result, error) {
	return c.p.allowN(&c.words[i], &c.hw, now, n)
}

// EstimateAt returns counter i's estimate at now.
func (c *Windows) EstimateAt(i int, now int64) float64 {
	return c.p.EstimateAt(c.p.state(&c.words[i], &c.hw), now)
}

// RemainingAt returns the whole units that fit in counter i at now.
func (c *Windows) RemainingAt(i int, now int64) int64 {
	return c.p.RemainingAt(c.p.state(&c.words[i], &c.hw), now)
}
