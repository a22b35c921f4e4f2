package packed64

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/cellrate/cellrate/limit"
)

// Buckets is a table of token buckets sharing one BucketParams and one
// HighWater: 8 bytes per bucket, for per-key limiters by the million. Its
// methods are safe for concurrent use; i must be in [0, Len()).
//
// The zero Buckets has no buckets; use NewBuckets. Buckets must not be
// copied after first use.
type Buckets struct {
	p     BucketParams
	hw    HighWater
	words []atomic.Uint64
}

// NewBuckets returns count full buckets, each refilled with events tokens
// per period and holding up to burst, counting time from 0 (nanotime's
// clock). See NewBucketParams for the bounds.
func NewBuckets(count int, events int64, period time.Duration, burst int64) (*Buckets, error) {
	if count < 1 {
		return nil, fmt.Errorf("packed64: count must be >= 1, got %d", count)
	}
	p, err := NewBucketParams(events, period, burst, 0)
	if err != nil {
		return nil, err
	}
	return &Buckets{p: p, words: make([]atomic.Uint64, count)}, nil
}

// Len returns the number of buckets.
func (b *Buckets) Len() int { return len(b.words) }

// Params returns the buckets' parameters.
func (b *Buckets) Params() BucketParams { return b.p }

// AllowAt reports whether a token may be taken from bucket i at time now,
// and takes it if so.
func (b *Buckets) AllowAt(i int, now int64) bool { return b.p.allow(&b.words[i], &b.hw, now) }

// AllowNAt takes n tokens from bucket i at time now if all n are available.
func (b *Buckets) AllowNAt(i int, now, n int64) (limit.Result, error) {
	return b.p.allowN(&b.words[i], &b.hw, now, n)
}

// TokensAt returns the tokens bucket i holds at now, with their fraction.
func (b *Buckets) TokensAt(i int, now int64) float64 {
	w := BucketWord(b.words[i].Load())
	return b.p.TokensAt(w, now, b.hw.Ref(b.p.clk.slack))
}

// Windows is a table of sliding-window counters sharing one WindowParams
// and one HighWater: 8 bytes per counter. Its methods are safe for
// concurrent use; i must be in [0, Len()).
//
// The zero Windows has no counters; use NewWindows. Windows must not be
// copied after first use.
type Windows struct {
	p     WindowParams
	hw    HighWater
	words []atomic.Uint64
}

// NewWindows returns count empty counters, each admitting limit units per
// window, counting time from 0 (nanotime's clock). See NewWindowParams for
// the bounds.
func NewWindows(count int, limit int64, window time.Duration) (*Windows, error) {
	if count < 1 {
		return nil, fmt.Errorf("packed64: count must be >= 1, got %d", count)
	}
	p, err := NewWindowParams(limit, window, 0)
	if err != nil {
		return nil, err
	}
	return &Windows{p: p, words: make([]atomic.Uint64, count)}, nil
}

// Len returns the number of counters.
func (c *Windows) Len() int { return len(c.words) }

// Params returns the counters' parameters.
func (c *Windows) Params() WindowParams { return c.p }

// AllowAt reports whether one unit may be admitted to counter i at time
// now, and admits it if so.
func (c *Windows) AllowAt(i int, now int64) bool { return c.p.allow(&c.words[i], &c.hw, now) }

// AllowNAt admits n units to counter i at time now if all n fit.
func (c *Windows) AllowNAt(i int, now, n int64) (limit.Result, error) {
	return c.p.allowN(&c.words[i], &c.hw, now, n)
}

// EstimateAt returns counter i's estimate at now.
func (c *Windows) EstimateAt(i int, now int64) float64 {
	w := WindowWord(c.words[i].Load())
	return c.p.EstimateAt(w, now, c.hw.Ref(c.p.clk.slack))
}
