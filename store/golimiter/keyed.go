package golimiter

import (
	"errors"
	"time"

	"github.com/cellrate/cellrate/internal/intmath"
	"github.com/cellrate/cellrate/keyed"
	"github.com/cellrate/cellrate/limit"
)

// table is one keyed table of token buckets: every use this package makes
// of package keyed is in this file.
type table struct {
	t      *keyed.Table
	tokens uint64
	period uint64 // interval in ns
	token  uint64 // period/tokens when a whole number of ns, else 0
}

// maxTokens is the most tokens a table takes: at most one a nanosecond,
// over an interval keyed takes (a full bucket's at most 2^62ns).
const maxTokens = 1 << 62

func newTable(tokens uint64, interval time.Duration, capacity int) (*table, error) {
	if tokens > maxTokens { // int64(tokens) would not be the value given
		return nil, &limit.ParamError{Pkg: "golimiter", Param: "tokens", Value: tokens, Min: uint64(1), Max: uint64(maxTokens),
			Reason: "at most one token a nanosecond, over an interval of at most 2^62ns"}
	}
	var opts []keyed.Option
	if capacity > 0 {
		opts = append(opts, keyed.WithCapacity(capacity))
	}
	t, err := keyed.New(int64(tokens), interval, int64(tokens), opts...)
	if err != nil {
		return nil, err
	}
	return &table{t: t, tokens: tokens, period: uint64(interval), token: wholeToken(uint64(interval), tokens)}, nil
}

// take takes one token of key at now; wait is when one token is there
// again after a denial. A new key refused a slot (a table made with
// keyed.WithRefuse) is a denial, as an empty bucket is.
func (t *table) take(key string, now int64) (ok bool, remaining uint64, wait int64, err error) {
	r, err := t.t.AllowNAt(key, now, 1)
	if err != nil && !errors.Is(err, keyed.ErrFull) {
		return false, 0, 0, err
	}
	return r.OK, uint64(max(r.Remaining, 0)), int64(r.RetryAfter), nil
}

// remaining reads key's whole tokens at now without taking any.
func (t *table) remaining(key string, now int64) uint64 {
	return uint64(max(t.t.RemainingAt(key, now), 0))
}

// untilFull is how long a bucket holding remaining tokens takes to be
// full again: ceil((tokens-remaining) * interval / tokens) ns.
func (t *table) untilFull(remaining uint64) int64 {
	if remaining >= t.tokens {
		return 0
	}
	if t.token != 0 {
		return int64((t.tokens - remaining) * t.token) // at most period
	}
	// The quotient is at most period, at most 2^62 ns (keyed.New's bound):
	// it fits 64 bits (MulDiv's ok) and an int64.
	q, r, _ := intmath.MulDiv(t.tokens-remaining, t.period, t.tokens)
	if r != 0 {
		q++
	}
	return int64(q)
}

// wholeToken returns period/n when it is a whole number of ns (so that
// untilFull needs no division), else 0.
func wholeToken(period, n uint64) uint64 {
	if period%n != 0 {
		return 0
	}
	return period / n
}
