package ulule

import (
	"errors"
	"time"

	"github.com/cellrate/cellrate/internal/intmath"
	"github.com/cellrate/cellrate/keyed"
	"github.com/cellrate/cellrate/limit"
)

// table is one keyed table of token buckets for one Rate: every use this
// package makes of package keyed is in this file.
type table struct {
	t      *keyed.Table
	limit  uint64
	period uint64 // ns
	token  uint64 // period/limit when a whole number of ns, else 0
}

func newTable(lim int64, period time.Duration, capacity int) (*table, error) {
	t, err := keyed.New(lim, period, lim, keyed.WithCapacity(capacity))
	if err != nil {
		return nil, err
	}
	return &table{t: t, limit: uint64(lim), period: uint64(period), token: wholeToken(uint64(period), uint64(lim))}, nil
}

// take takes n units of key at now if all n are there. A cost over the
// limit and a new key refused a slot are denials, as an empty bucket is.
func (t *table) take(key string, now, n int64) (ok bool, remaining int64, err error) {
	r, err := t.t.AllowNAt(key, now, n)
	switch {
	case err == nil:
	case errors.Is(err, keyed.ErrFull), errors.Is(err, limit.ErrCostExceedsBurst):
		return false, max(r.Remaining, 0), nil
	default:
		return false, 0, err
	}
	return r.OK, max(r.Remaining, 0), nil
}

// remaining reads key's whole units at now without taking any.
func (t *table) remaining(key string, now int64) int64 {
	return max(t.t.RemainingAt(key, now), 0)
}

// untilFull is how long a bucket holding remaining units takes to be full
// again: ceil((limit-remaining) * period / limit) ns.
func (t *table) untilFull(remaining int64) int64 {
	if uint64(remaining) >= t.limit {
		return 0
	}
	if t.token != 0 {
		return int64((t.limit - uint64(remaining)) * t.token) // at most period
	}
	// The quotient is at most period, at most 2^62 ns (keyed.New's bound):
	// it fits 64 bits (MulDiv's ok) and an int64.
	q, r, _ := intmath.MulDiv(t.limit-uint64(remaining), t.period, t.limit)
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
