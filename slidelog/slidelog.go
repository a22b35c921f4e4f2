// Package slidelog is an exact sliding-window limiter: at most Limit events
// in any window of length W, with no estimate, in a fixed ring of Limit
// timestamps. Use it for small limits that must never be exceeded in any
// window (say 5 logins a minute); for large limits package window holds the
// same limit in 16 bytes by estimate. See ExampleLimiter.
//
// An admission replaces one timestamp by one compare-and-swap; a denial
// writes nothing. It costs 8 bytes per unit of Limit and up to Limit loads
// per decision.
//
// # Contract
//
// Over the now values callers pass, admitted events satisfy: for every t,
// at most Limit of them have now in (t-W, t]. This holds on every
// schedule: concurrent callers, now values stale or out of order, anywhere
// in the int64 range. When the now values a Limiter sees are non-decreasing
// (one caller on a monotonic clock), it is also exact the other way: it
// admits a request exactly when an ideal sliding log would. Package window,
// by estimate, admits up to 2*Limit-1 in some windows.
//
// A request of n events that cannot take all n takes none of them; under
// concurrency, other requests may meanwhile be denied for them (never
// admitted for them).
//
// # Time
//
// Times are int64 nanoseconds (package nanotime). A new Limiter behaves as
// if Limit events had been admitted at math.MinInt64: nothing is admitted
// at now < math.MinInt64+W. No sum of a time and W is formed, so nothing
// wraps at math.MaxInt64.
//
// There is no Reserve or Wait: a sliding log cannot take a unit ahead of
// time without holding a slot at a future time, which would deny requests
// in windows before it.
package slidelog

import (
	"math/bits"
	"sync/atomic"
	"time"

	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/nanotime"
)

// MaxLimit is the largest Limit: every denial reads all Limit slots.
const MaxLimit = 1 << 16

const signBit = 1 << 63

// Params is a limit per window.
type Params struct {
	l int64
	w uint64
}

// NewParams returns the Params of at most lim events in any window of
// length window. lim is in [1, MaxLimit]; window at least 1ns.
func NewParams(lim int64, window time.Duration) (Params, error) {
	if lim < 1 || lim > MaxLimit {
		return Params{}, &limit.ParamError{Pkg: "slidelog", Param: "limit", Value: lim, Min: int64(1), Max: int64(MaxLimit)}
	}
	if window < 1 {
		return Params{}, &limit.ParamError{Pkg: "slidelog", Param: "window", Value: window, Min: time.Duration(1)}
	}
	return Params{l: lim, w: uint64(window)}, nil
}

// Limit returns the most events in any window.
func (p Params) Limit() int64 { return p.l }

// Window returns the window's length.
func (p Params) Window() time.Duration { return time.Duration(p.w) }

// Free reports whether a slot holding the time of v (mapped, see key) can
// take an admission at u: v <= u - W.
func (p Params) free(v, u uint64) bool { return u >= p.w && v <= u-p.w }

// key maps int64 time onto uint64 in the same order (math.MinInt64 is 0).
func key(now int64) uint64 { return uint64(now) ^ signBit }

// Limiter is a sliding log of Limit slots. It is safe for concurrent use.
// The zero Limiter has limit 0: it admits nothing, refusing every n > 0 with
// limit.ErrCostExceedsBurst; make one with New. A Limiter must not be copied
// after first use (go vet reports copies).
type Limiter struct {
	p     Params
	clock nanotime.Clock
	hint  atomic.Uint32 // where the search for a free slot starts
	slots []atomic.Uint64
}

// Option configures a Limiter.
type Option func(*config)

type config struct{ clock nanotime.Clock }

// WithClock makes the plain (non-At) methods read clock instead of
// nanotime.Now.
func WithClock(clock nanotime.Clock) Option { return func(c *config) { c.clock = clock } }

// New returns a Limiter of at most lim events in any window (see NewParams
// for the ranges; a nil clock is refused too).
func New(lim int64, window time.Duration, opts ...Option) (*Limiter, error) {
	p, err := NewParams(lim, window)
	if err != nil {
		return nil, err
	}
	return NewFromParams(p, opts...)
}

// NewFromParams returns a Limiter with Params p (from NewParams).
func NewFromParams(p Params, opts ...Option) (*Limiter, error) {
	c := config{clock: nanotime.Now}
	for i, o := range opts {
		if o == nil {
			return nil, &limit.ParamError{Pkg: "slidelog", Param: "option", Value: i, Reason: "a nil Option"}
		}
		o(&c)
	}
	if p.l < 1 {
		return nil, &limit.ParamError{Pkg: "slidelog", Param: "params", Value: p, Reason: "the zero Params: make them with NewParams"}
	}
	if c.clock == nil {
		return nil, &limit.ParamError{Pkg: "slidelog", Param: "clock", Value: nil, Reason: "the clock must not be nil"}
	}
	return &Limiter{p: p, clock: c.clock, slots: make([]atomic.Uint64, p.l)}, nil
}

// Params returns the limiter's parameters.
func (l *Limiter) Params() Params { return l.p }

// now reads the Limiter's clock, nanotime.Now for the zero Limiter.
func (l *Limiter) now() int64 {
	if l.clock == nil {
		return nanotime.Now()
	}
	return l.clock()
}

// Allow is AllowAt with the Limiter's clock.
func (l *Limiter) Allow() bool { return l.AllowAt(l.now()) }

// AllowAt reports whether one event may happen at now, and records it if so.
func (l *Limiter) AllowAt(now int64) bool {
	_, _, ok := l.take(key(now))
	return ok
}

// take replaces the time in one free slot with u, and returns the slot and
// the time it held.
func (l *Limiter) take(u uint64) (j uint32, old uint64, ok bool) {
	n := uint32(len(l.slots))
	j = l.hint.Load()
	for range n {
		if j >= n {
			j = 0
		}
		for v := l.slots[j].Load(); l.p.free(v, u); v = l.slots[j].Load() {
			if l.slots[j].CompareAndSwap(v, u) {
				l.hint.Store(j + 1) // with times in order, the next slot holds the oldest
				return j, v, true
			}
		}
		j++
	}
	return 0, 0, false
}

// AllowN is AllowNAt with the Limiter's clock.
func (l *Limiter) AllowN(n int64) (limit.Result, error) { return l.AllowNAt(l.now(), n) }

// AllowNAt admits n events at now if all n fit, else none (see the package
// doc for how). n < 0 is limit.ErrNegativeCost and n > Limit
// limit.ErrCostExceedsBurst, each with a Result that is not OK; n == 0 is
// admitted and changes nothing. Remaining and RetryAfter are read from the
// slots after the decision: exact for one caller, a snapshot under
// concurrency. n above 16 allocates the list of slots to put back.
func (l *Limiter) AllowNAt(now, n int64) (limit.Result, error) {
	switch {
	case n < 0:
		return limit.Result{RetryAfter: limit.Never}, limit.ErrNegativeCost
	case n > l.p.l:
		return limit.Result{RetryAfter: limit.Never}, limit.ErrCostExceedsBurst
	}
	u := key(now)
	ok := true
	switch n {
	case 0:
	case 1:
		_, _, ok = l.take(u)
	default:
		ok = l.takeN(u, n)
	}
	return l.result(u, n, ok), nil
}

type took struct {
	j   uint32
	old uint64
}

// takeN takes n slots, or none: on failure it puts back the ones it took.
func (l *Limiter) takeN(u uint64, n int64) bool {
	var buf [16]took
	t := buf[:0]
	for range n {
		j, old, ok := l.take(u)
		if !ok {
			for _, x := range t {
				l.slots[x.j].CompareAndSwap(u, x.old) // only if no later admission replaced it
			}
			return false
		}
		t = append(t, took{j, old})
	}
	return true
}

// result reads Remaining (free slots at u) and, when not ok, RetryAfter:
// the time until n slots are free, as the slots stand.
func (l *Limiter) result(u uint64, n int64, ok bool) limit.Result {
	r := limit.Result{OK: ok}
	var buf [16]uint64
	busy := buf[:0] // the n smallest times of busy slots, when needed
	for i := range l.slots {
		v := l.slots[i].Load()
		if l.p.free(v, u) {
			r.Remaining++
			continue
		}
		if ok {
			continue
		}
		busy = insertSmallest(busy, v, int(n))
	}
	if ok || r.Remaining >= n {
		if !ok {
			r.RetryAfter = 1 // freed meanwhile: try again at once
		}
		return r
	}
	// The (n-Remaining)th smallest busy time v frees at v+W: the wait is
	// v+W-u > 0, which passes 2^63-1 only for times centuries apart.
	r.RetryAfter = limit.Never
	v := busy[n-r.Remaining-1]
	if u >= l.p.w {
		if d := v - (u - l.p.w); d < uint64(limit.Never) {
			r.RetryAfter = time.Duration(d)
		}
	} else if d, c := bits.Add64(v, l.p.w-u, 0); c == 0 && d < uint64(limit.Never) {
		r.RetryAfter = time.Duration(d)
	}
	return r
}

// insertSmallest keeps s, sorted, as the k smallest values seen.
func insertSmallest(s []uint64, v uint64, k int) []uint64 {
	if k <= 0 {
		return s
	}
	if len(s) == k {
		if v >= s[k-1] {
			return s
		}
		s = s[:k-1]
	}
	i := len(s)
	s = append(s, v)
	for ; i > 0 && s[i-1] > v; i-- {
		s[i] = s[i-1]
	}
	s[i] = v
	return s
}

// Remaining is RemainingAt with the Limiter's clock.
func (l *Limiter) Remaining() int64 { return l.RemainingAt(l.now()) }

// RemainingAt returns how many events could be admitted at now, as the
// slots stand.
func (l *Limiter) RemainingAt(now int64) int64 {
	u := key(now)
	var r int64
	for i := range l.slots {
		if l.p.free(l.slots[i].Load(), u) {
			r++
		}
	}
	return r
}

var _ limit.Limiter = (*Limiter)(nil)
