// Package gcra is a lock-free Generic Cell Rate Algorithm limiter whose whole
// state is one 64-bit theoretical arrival time (TAT).
//
// Contract: for a limiter of events per period and burst b, the admitted cost
// whose now values lie in any closed interval of length t is at most
// b + events*t/period, exactly (no rounding in the limiter's favour), on every
// schedule: concurrent callers, now values out of order or stale, huge jumps,
// now anywhere in the int64 range. A denial reads the state and writes
// nothing, so a mostly-denying limiter does not write its cache line.
//
// The arithmetic is integer. When the emission interval T = period/events is
// a whole number of nanoseconds the limiter is exact both ways: it admits
// everything the ideal GCRA admits. When it is not (3 per second is
// 333333333.33 ns), 64 bits cannot hold an exact TAT over the whole int64
// time range, so the TAT counts steps of T/floor(T) ns (1 to 2 ns): an event
// is a whole number of steps, so a limiter that stays busy keeps the exact
// rate forever. The one rounding is when a request finds the limiter full:
// the TAT restarts at the first step at or after now, losing under one step
// (< 2 ns) of refill, once per idle period, never in the caller's favour. With
// injected time this can be seen: a full burst asked for at one instant that
// is not on the step grid gets burst-1 events then, the last one < 2 ns later.
//
// Time is int64 nanoseconds on a fixed-origin clock (package nanotime). Each
// method has an ...At twin taking now; the plain form reads nanotime.Now.
package gcra

import (
	"fmt"
	"math/bits"
	"sync/atomic"
	"time"

	"golang.org/x/sys/cpu"

	"github.com/cellrate/cellrate/internal/backoff"
	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/nanotime"
)

// signBit maps int64 time onto uint64 in the same order: u = uint64(now) ^ signBit,
// so math.MinInt64 is step 0 and the TAT never needs a sign.
const signBit = 1 << 63

// maxBurstNs bounds burst*T so the burst's slack, in steps, fits in 62 bits.
const maxBurstNs = 1 << 62

// Params is the rate and burst of a GCRA in the integer form Step uses. It is
// immutable; the zero Params is invalid (make one with NewParams).
//
// A state is a TAT counted in steps of p/e nanoseconds (1 <= p/e < 2) from
// math.MinInt64; one event is j steps, so p*j/e is exactly period/events.
type Params struct {
	p, e  uint64 // a step is p/e ns
	j     uint64 // steps per event
	burst uint64 // b, in events
	slack uint64 // (b-1)*j: the TAT may lead now by this many steps before one event
	slP1  [2]uint64
}

// NewParams returns the Params of a limiter that admits events per period on
// average and at most burst at once.
func NewParams(events int64, period time.Duration, burst int64) (Params, error) {
	switch {
	case events < 1:
		return Params{}, fmt.Errorf("gcra: events must be >= 1, got %d", events)
	case period < 1:
		return Params{}, fmt.Errorf("gcra: period must be >= 1ns, got %v", period)
	case burst < 1:
		return Params{}, fmt.Errorf("gcra: burst must be >= 1, got %d", burst)
	}
	per, ev := uint64(period), uint64(events)
	g := gcd(per, ev)
	per, ev = per/g, ev/g
	if per < ev {
		return Params{}, fmt.Errorf("gcra: rate %d per %v exceeds one event per nanosecond", events, period)
	}
	j := per / ev
	p, e := per, ev*j
	g = gcd(p, e)
	p, e = p/g, e/g
	// burst*T = burst*per/ev must not exceed maxBurstNs.
	hi, lo := bits.Mul64(uint64(burst), per)
	if hi != 0 || lo/ev > maxBurstNs || (lo/ev == maxBurstNs && lo%ev != 0) {
		return Params{}, fmt.Errorf("gcra: burst %d times the interval %v/%d exceeds 2^62ns", burst, period, events)
	}
	ps := Params{p: p, e: e, j: j, burst: uint64(burst), slack: (uint64(burst) - 1) * j}
	ps.slP1[0], ps.slP1[1] = bits.Mul64(ps.slack, p)
	return ps, nil
}

// Burst returns the most events the Params admit at once.
func (ps Params) Burst() int64 { return int64(ps.burst) }

// decide is the step for a cost of c steps whose slack*p is slh:sll. uh:ul
// is u*e, now in steps times p. It returns the next TAT and whether the
// request is admitted; only an idle restart divides.
func (ps *Params) decide(tat, uh, ul, c, slh, sll uint64) (uint64, bool) {
	kh, kl := bits.Mul64(tat, ps.p)
	// Admit iff TAT - slack <= now, in units of 1/e ns: tat*p <= u*e + slack*p.
	lo, carry := bits.Add64(ul, sll, 0)
	hi := uh + slh + carry
	if kh > hi || (kh == hi && kl > lo) {
		return tat, false
	}
	if kh < uh || (kh == uh && kl < ul) {
		return ps.restart(tat, uh, ul, c)
	}
	if next, carry := bits.Add64(tat, c, 0); carry == 0 {
		return next, true
	}
	return tat, false // past the end of int64 time: never admit
}

// restart admits c steps when the TAT is behind now (u*e = uh:ul): the TAT
// restarts at the first step at or after now. u*e/p < 2^64 because e <= p,
// so uh < p. It refuses what would pass the end of int64 time.
func (ps *Params) restart(tat, uh, ul, c uint64) (uint64, bool) {
	q, r := ul, uint64(0) // whole-ns intervals have p == e == 1: now itself
	if ps.p != 1 {
		q, r = bits.Div64(uh, ul, ps.p)
	}
	carry := uint64(0)
	if r != 0 {
		q, carry = bits.Add64(q, 1, 0)
	}
	next, carry2 := bits.Add64(q, c, 0)
	if carry|carry2 != 0 {
		return tat, false
	}
	return next, true
}

// Step is the GCRA decision as a pure function: given the stored TAT, now
// and a cost of n events, it returns the TAT to store and the Result. A
// denial returns tat unchanged, so a store need not be written then. The
// zero TAT is a full limiter at any now.
//
// n < 0 returns limit.ErrNegativeCost and n > burst limit.ErrCostExceedsBurst,
// each with a Result that is not OK. n == 0 is admitted and changes nothing.
func (ps Params) Step(tat uint64, now, n int64) (next uint64, r limit.Result, err error) {
	switch {
	case n < 0:
		return tat, limit.Result{RetryAfter: limit.Never}, limit.ErrNegativeCost
	case uint64(n) > ps.burst:
		return tat, limit.Result{RetryAfter: limit.Never}, limit.ErrCostExceedsBurst
	}
	u := uint64(now) ^ signBit
	uh, ul := bits.Mul64(u, ps.e)
	c := uint64(n) * ps.j
	slh, sll := bits.Mul64(ps.burst*ps.j-c, ps.p)
	if n == 0 {
		return tat, ps.result(tat, true, uh, ul, slh, sll), nil
	}
	next, ok := ps.decide(tat, uh, ul, c, slh, sll)
	return next, ps.result(next, ok, uh, ul, slh, sll), nil
}

// result fills Remaining (whole events left after the decision) and
// RetryAfter (ns until the same request would be admitted).
func (ps Params) result(tat uint64, ok bool, uh, ul, slh, sll uint64) limit.Result {
	r := limit.Result{OK: ok}
	q, _ := bits.Div64(uh, ul, ps.p) // floor(now) in steps
	if tat > q {
		// Tokens at now: (b*j - (tat - now))/j steps, floored; now's fraction
		// of a step cannot lift the whole-event floor.
		if x, bj := tat-q, ps.burst*ps.j; x < bj {
			r.Remaining = int64((bj - x) / ps.j)
		}
	} else {
		r.Remaining = int64(ps.burst)
	}
	if ok {
		return r
	}
	// Admitted once tat*p <= (u+w)*e + slack*p: w = ceil((tat*p - u*e - slack*p)/e).
	kh, kl := bits.Mul64(tat, ps.p)
	lo, carry := bits.Add64(ul, sll, 0)
	hi := uh + slh + carry
	if kh < hi || (kh == hi && kl <= lo) {
		r.RetryAfter = limit.Never // refused only because time would overflow
		return r
	}
	dl, borrow := bits.Sub64(kl, lo, 0)
	dh := kh - hi - borrow
	if dh >= ps.e {
		r.RetryAfter = limit.Never
		return r
	}
	w, rem := bits.Div64(dh, dl, ps.e)
	switch {
	case w >= uint64(limit.Never):
		w = uint64(limit.Never)
	case rem != 0:
		w++
	}
	r.RetryAfter = int64(w)
	return r
}

// Limiter is a GCRA in a sync/atomic cell. It is safe for concurrent use;
// every decision is one load, the step, and (only when admitting) one
// compare-and-swap, retried on conflict after a short spin (which lets the
// core that won keep the line for its next calls). The state is padded to
// its own cache line.
//
// The zero value is not usable: make a Limiter with New. A Limiter must not
// be copied after first use.
type Limiter struct {
	ps  Params
	_   cpu.CacheLinePad // tat's line holds nothing the reads of ps would miss on
	tat atomic.Uint64
	_   cpu.CacheLinePad
}

// New returns a full Limiter that admits events per period on average and at
// most burst at once. It returns an error naming the parameter that is out of
// range: events, period or burst below 1, a rate above one event per
// nanosecond, or burst*period/events above 2^62 ns (146 years).
func New(events int64, period time.Duration, burst int64) (*Limiter, error) {
	ps, err := NewParams(events, period, burst)
	if err != nil {
		return nil, err
	}
	return &Limiter{ps: ps}, nil
}

// Params returns the limiter's parameters, for running Step elsewhere.
func (l *Limiter) Params() Params { return l.ps }

// Allow is AllowAt(nanotime.Now()).
func (l *Limiter) Allow() bool { return l.AllowAt(nanotime.Now()) }

// AllowAt reports whether one event may happen at now, and records it if so.
func (l *Limiter) AllowAt(now int64) bool {
	ps := &l.ps
	uh, ul := bits.Mul64(uint64(now)^signBit, ps.e)
	// hi:lo = u*e + slack*p, the most tat*p may be for one more event.
	lo, carry := bits.Add64(ul, ps.slP1[1], 0)
	hi := uh + ps.slP1[0] + carry
	var spin backoff.Spin
	for ; ; spin.Wait() {
		tat := l.tat.Load()
		kh, kl := bits.Mul64(tat, ps.p)
		if kh > hi || (kh == hi && kl > lo) {
			return false // a denial writes nothing
		}
		next := tat + ps.j
		if kh < uh || (kh == uh && kl < ul) || next < tat {
			// An idle restart or the end of time: decide's slow path.
			var ok bool
			if next, ok = ps.decide(tat, uh, ul, ps.j, ps.slP1[0], ps.slP1[1]); !ok {
				return false
			}
		}
		if l.tat.CompareAndSwap(tat, next) {
			return true
		}
	}
}

// AllowN is AllowNAt(nanotime.Now(), n).
func (l *Limiter) AllowN(n int64) (limit.Result, error) { return l.AllowNAt(nanotime.Now(), n) }

// AllowNAt admits n events at now if all n fit, else none. See Params.Step
// for errors and for n == 0.
func (l *Limiter) AllowNAt(now, n int64) (limit.Result, error) {
	var spin backoff.Spin
	for ; ; spin.Wait() {
		tat := l.tat.Load()
		next, r, err := l.ps.Step(tat, now, n)
		if !r.OK || next == tat || l.tat.CompareAndSwap(tat, next) {
			return r, err
		}
	}
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

var _ limit.Limiter = (*Limiter)(nil)
