package chirate

import (
	"errors"
	"math"
	"sync/atomic"
	"time"

	"github.com/cellrate/cellrate/limit"
	"github.com/go-chi/httprate"
)

// Options are New's input.
type Options struct {
	// Capacity is the number of keys counted at once, in fixed memory (24
	// bytes a key): at least 4, at most 2^32 (2^24 on 32-bit targets),
	// rounded up to a multiple of 4. Default 65,536.
	Capacity int
}

var (
	// ErrNotConfigured is returned by every call before Config, which
	// httprate's NewRateLimiter makes.
	ErrNotConfigured = errors.New("chirate: counter used before Config")
	// ErrReconfigured is returned by every call after Config was called
	// again with another window (give each RateLimiter its own Counter).
	ErrReconfigured = errors.New("chirate: Config called again with another window")
	// ErrNegative is returned by IncrementBy for an amount below zero.
	ErrNegative = errors.New("chirate: negative amount")
	// ErrCount is returned by IncrementBy when a key's current and
	// previous windows would count more than MaxCount together, or for a
	// window older than the two a key counts.
	ErrCount = errors.New("chirate: past MaxCount, or a window the key no longer counts")
)

// Counter is an httprate.LimitCounter on a keyed table. Its methods are
// safe for concurrent use. Make one with New and give it to one
// RateLimiter (httprate.WithLimitCounter), which configures it.
type Counter struct {
	capacity int
	cur      atomic.Pointer[setup]
}

type setup struct {
	t      *table
	window int64 // httprate's window, ns
	err    error // Config's, returned by every call
}

var _ httprate.LimitCounter = (*Counter)(nil)

// New returns a Counter for Config to set up. A capacity out of range is
// a *limit.ParamError.
func New(o Options) (*Counter, error) {
	c := &Counter{capacity: o.Capacity}
	if c.capacity == 0 {
		c.capacity = 1 << 16
	}
	if _, err := newTable(time.Second, c.capacity); err != nil {
		return nil, err
	}
	return c, nil
}

// Config makes the table for windows of windowLength, starting empty.
// httprate calls it from NewRateLimiter; requestLimit is httprate's to
// enforce. A window out of range is returned by every later call, until a
// Config with a window in range. Counts are never forgotten: after a
// Config that made a table, another of the same window keeps it (two
// RateLimiters given one Counter count together), and one of another
// window makes every later call return ErrReconfigured.
func (c *Counter) Config(_ int, windowLength time.Duration) {
	for {
		old := c.cur.Load()
		var next *setup
		switch {
		case old != nil && old.t != nil && old.window == int64(windowLength):
			return
		case old != nil && (old.t != nil || old.err == ErrReconfigured):
			next = &setup{err: ErrReconfigured}
		default:
			t, err := newTable(windowLength, c.capacity)
			next = &setup{t: t, window: int64(windowLength), err: err}
			if err != nil {
				next.t = nil
			}
		}
		if c.cur.CompareAndSwap(old, next) {
			return
		}
	}
}

// Increment is IncrementBy(key, currentWindow, 1).
func (c *Counter) Increment(key string, currentWindow time.Time) error {
	return c.IncrementBy(key, currentWindow, 1)
}

// IncrementBy counts amount more for key in the window starting at
// currentWindow. It returns ErrFull for a new key the table has no room
// for, and ErrCount past MaxCount or for a window before the two the key
// counts (an increment for the window just before is counted there); each
// counts nothing, and httprate answers either with its error handler
// (fails closed).
func (c *Counter) IncrementBy(key string, currentWindow time.Time, amount int) error {
	s, i, err := c.window(currentWindow)
	if err != nil {
		return err
	}
	if amount < 0 {
		return ErrNegative
	}
	ok, err := s.t.add(key, i, int64(amount))
	if err == nil && !ok {
		err = ErrCount
	}
	return err
}

// Get returns key's counts in the window starting at currentWindow and in
// the window before it, which is previousWindow when httprate calls it.
// The two are read one after the other; httprate holds its lock around
// Get and IncrementBy, and without it an increment made meanwhile in the
// same window can only add to prev (the estimate errs high, toward
// denying). For a window before the key's latest (the clock stepped back,
// or an increment in the next window landed meanwhile), curr reads high,
// with the later window's count, and prev reads 0: a key counts its latest
// two windows only, and they never read low.
func (c *Counter) Get(key string, currentWindow, _ time.Time) (curr, prev int, err error) {
	s, i, err := c.window(currentWindow)
	if err != nil {
		return 0, 0, err
	}
	cu, pr := s.t.counts(key, i)
	return int(cu), int(pr), nil
}

// The first and last times of int64 nanoseconds: UnixNano wraps outside.
var firstNs, lastNs = time.Unix(0, math.MinInt64), time.Unix(0, math.MaxInt64)

// window returns the setup and the index of the window starting at start:
// start/window rounded down, so that consecutive windows have consecutive
// indexes whatever their alignment.
func (c *Counter) window(start time.Time) (*setup, int64, error) {
	s := c.cur.Load()
	switch {
	case s == nil:
		return nil, 0, ErrNotConfigured
	case s.err != nil:
		return nil, 0, s.err
	}
	if start.Before(firstNs) || start.After(lastNs) {
		return nil, 0, startError(start)
	}
	ns := start.UnixNano()
	i := ns / s.window
	if ns%s.window < 0 {
		i--
	}
	if i >= math.MaxInt64/s.t.unit-1 || i <= math.MinInt64/s.t.unit+1 {
		return nil, 0, startError(start)
	}
	return s, i, nil
}

func startError(start time.Time) error {
	return &limit.ParamError{Pkg: "chirate", Param: "window start", Value: start, Reason: "out of the range of int64 nanoseconds"}
}
