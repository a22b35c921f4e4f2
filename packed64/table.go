package packed64

import (
	"time"

	"github.com/cellrate/cellrate/internal/packed64core"
	"github.com/cellrate/cellrate/limit"
)

// Buckets is a table of token buckets sharing their parameters and
// reference time: 8 bytes per bucket, for per-key limiters by the million.
// Its methods are safe for concurrent use; i must be in [0, count).
//
// The zero Buckets has no buckets: as in an empty slice, every i is out of
// range and panics; use NewBuckets. Buckets must not be copied after first
// use (go vet reports copies).
type Buckets struct {
	_ noCopy
	t packed64core.Buckets
}

// NewBuckets returns count full buckets, each refilled with events tokens
// per period and holding up to burst. A parameter out of range is a
// *limit.ParamError: count must be in [1, 2^32] (2^27 where int has 32
// bits); see NewBucket for the others.
func NewBuckets(count int, events int64, period time.Duration, burst int64, opts ...Option) (*Buckets, error) {
	o, err := core(opts)
	if err != nil {
		return nil, err
	}
	t := new(Buckets)
	if err := t.t.Init(count, events, period, burst, o...); err != nil {
		return nil, err
	}
	return t, nil
}

// Allow is AllowAt with the table's clock.
func (t *Buckets) Allow(i int) bool { return t.t.Allow(i) }

// AllowAt is Bucket.AllowAt on bucket i.
func (t *Buckets) AllowAt(i int, now int64) bool { return t.t.AllowAt(i, now) }

// AllowN is AllowNAt with the table's clock.
func (t *Buckets) AllowN(i int, n int64) (limit.Result, error) { return t.t.AllowN(i, n) }

// AllowNAt is Bucket.AllowNAt on bucket i.
func (t *Buckets) AllowNAt(i int, now, n int64) (limit.Result, error) {
	return t.t.AllowNAt(i, now, n)
}

// Windows is a table of sliding-window counters sharing their parameters
// and reference time: 8 bytes per counter. Its methods are safe for
// concurrent use; i must be in [0, count).
//
// The zero Windows has no counters: as in an empty slice, every i is out of
// range and panics; use NewWindows. Windows must not be copied after first
// use (go vet reports copies).
type Windows struct {
	_ noCopy
	t packed64core.Windows
}

// NewWindows returns count empty counters, each admitting limit units per
// window. A parameter out of range is a *limit.ParamError: count must be in
// [1, 2^32] (2^27 where int has 32 bits); see NewWindow for the others.
func NewWindows(count int, limit int64, window time.Duration, opts ...Option) (*Windows, error) {
	o, err := core(opts)
	if err != nil {
		return nil, err
	}
	t := new(Windows)
	if err := t.t.Init(count, limit, window, o...); err != nil {
		return nil, err
	}
	return t, nil
}

// Allow is AllowAt with the table's clock.
func (t *Windows) Allow(i int) bool { return t.t.Allow(i) }

// AllowAt is Window.AllowAt on counter i.
func (t *Windows) AllowAt(i int, now int64) bool { return t.t.AllowAt(i, now) }

// AllowN is AllowNAt with the table's clock.
func (t *Windows) AllowN(i int, n int64) (limit.Result, error) { return t.t.AllowN(i, n) }

// AllowNAt is Window.AllowNAt on counter i.
func (t *Windows) AllowNAt(i int, now, n int64) (limit.Result, error) {
	return t.t.AllowNAt(i, now, n)
}
