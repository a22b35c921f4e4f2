// Package gcrastep is package gcra's pure step: the GCRA's parameters and
// state, and every decision on them as a function (admit, reserve, undo,
// read). gcra's Limiter, keyed, httplimit and pacer run it in their cells;
// package step wraps it for users. The arithmetic is derived in
// ARCHITECTURE.md.
package gcrastep

import (
	"math/bits"
	"time"

	"github.com/cellrate/cellrate/internal/intmath"
	"github.com/cellrate/cellrate/internal/ratio"
	"github.com/cellrate/cellrate/limit"
)

// signBit maps int64 time onto uint64 in the same order: u = uint64(now) ^ signBit,
// so math.MinInt64 is step 0 and the TAT never needs a sign.
const signBit = 1 << 63

// maxBurstNs bounds burst*T so the burst's slack, in steps, fits in 62 bits.
const maxBurstNs = 1 << 62

// State is a GCRA's whole state: its theoretical arrival time (TAT), counted
// in steps of Params' step (1 to 2 ns, see the package doc) from
// math.MinInt64. The zero State is a full limiter at any now. States only
// grow, except when Refund or a cancelled Reservation gives one back.
type State uint64

// Params is the rate and burst of a GCRA in the integer form the steps use.
// It is immutable. The zero Params has burst 0: its steps admit nothing,
// refusing every n > 0 with limit.ErrCostExceedsBurst; make Params with
// NewParams.
//
// A step is p/e nanoseconds (1 <= p/e < 2); one event is j steps, so p*j/e is
// exactly period/events.
type Params struct {
	p, e  uint64 // a step is p/e ns
	J     uint64 // steps per event
	burst uint64 // b, in events
	BJ    uint64 // b*j: the most steps the TAT may lead now by, after an admission
}

func ParamErr(param string, value, lo, hi any, reason string) error {
	return &limit.ParamError{Pkg: "gcra", Param: param, Value: value, Min: lo, Max: hi, Reason: reason}
}

// NewParams returns the Params of a limiter that admits events per period on
// average and at most burst at once. It returns a *limit.ParamError for
// events, period or burst below 1, a rate above one event per nanosecond
// (Param "events", Max the period in ns), or burst*period/events above 2^62 ns
// (146 years; Param "burst", Max the largest burst that fits).
func NewParams(events int64, period time.Duration, burst int64) (Params, error) {
	switch {
	case events < 1:
		return Params{}, ParamErr("events", events, int64(1), nil, "")
	case period < 1:
		return Params{}, ParamErr("period", period, time.Duration(1), nil, "")
	case burst < 1:
		return Params{}, ParamErr("burst", burst, int64(1), nil, "")
	}
	return params(uint64(events), uint64(period), burst, func() error {
		return ParamErr("events", events, int64(1), int64(period), "the rate exceeds one event per nanosecond")
	})
}

// RateParams returns the Params of NewRate's limiter (see NewRate).
func RateParams(rate float64, burst int64) (Params, error) {
	num, den, ok := ratio.Fraction(rate)
	if !ok {
		return Params{}, ParamErr("rate", rate, 0x1p-32, 1e9, "not a finite number of events per second in range")
	}
	if burst < 1 {
		return Params{}, ParamErr("burst", burst, int64(1), nil, "")
	}
	// den <= 2^32: den seconds fit in int64 nanoseconds.
	return params(num, den*uint64(time.Second), burst, func() error {
		return ParamErr("rate", rate, nil, 1e9, "the rate exceeds one event per nanosecond")
	})
}

// params makes the Params of events per period ns; tooFast is the error for
// a rate above one event per nanosecond.
func params(events, period uint64, burst int64, tooFast func() error) (Params, error) {
	g := intmath.GCD(period, events)
	per, ev := period/g, events/g
	if per < ev {
		return Params{}, tooFast()
	}
	j := per / ev
	p, e := per, ev*j
	g = intmath.GCD(p, e)
	p, e = p/g, e/g
	// burst*T = burst*per/ev must not exceed maxBurstNs; burst*per may
	// pass 64 bits even when the quotient fits.
	if q, r, ok := intmath.MulDiv(uint64(burst), per, ev); !ok || q > maxBurstNs || q == maxBurstNs && r != 0 {
		most, _, _ := intmath.MulDiv(maxBurstNs, ev, per) // below 2^62: ev <= per
		return Params{}, ParamErr("burst", burst, int64(1), int64(most), "burst*period/events exceeds 2^62ns")
	}
	ps := Params{p: p, e: e, J: j, burst: uint64(burst), BJ: uint64(burst) * j}
	return ps, nil
}

// Burst returns the most events the Params admit at once.
func (ps Params) Burst() int64 { return int64(ps.burst) }

// Interval returns the emission interval period/events, rounded down to a
// whole nanosecond: the time one event takes to refill; 0 for the zero
// Params.
func (ps Params) Interval() time.Duration {
	if ps.J == 0 {
		return 0
	}
	hi, lo := bits.Mul64(ps.p, ps.J)
	q, _ := bits.Div64(hi, lo, ps.e)
	return time.Duration(q)
}

// at is where a request of c steps stands at a now: u*e (now in steps,
// times p) and u*e + (b*j - c)*p, the most tat*p may be for it to be
// admitted.
type at struct {
	uh, ul, hi, lo uint64
}

// At returns where a request of c <= b*j steps stands At now.
func (ps *Params) At(now int64, c uint64) at {
	var a at
	a.uh, a.ul = bits.Mul64(uint64(now)^signBit, ps.e)
	slh, sll := bits.Mul64(ps.BJ-c, ps.p)
	var carry uint64
	a.lo, carry = bits.Add64(a.ul, sll, 0)
	// No overflow: u*e < 2^64*e, and slack*p <= b*j*p <= 2^62*e (burst*T <= 2^62 ns).
	a.hi = a.uh + slh + carry
	return a
}

// Waits is the admission inequality, the one place it is written: a request
// at a must wait iff TAT - slack > now, in units of 1/e ns tat*p > u*e +
// slack*p. It returns tat*p too.
func (ps *Params) Waits(tat State, a at) (kh, kl uint64, wait bool) {
	kh, kl = bits.Mul64(uint64(tat), ps.p)
	return kh, kl, kh > a.hi || kh == a.hi && kl > a.lo
}

// Behind reports whether tat*p (kh:kl) is before now (u*e): the limiter
// has been full since before now.
func Behind(kh, kl uint64, a at) bool {
	return kh < a.uh || kh == a.uh && kl < a.ul
}

// admit is the decision for c steps at a: the next TAT and whether the
// request is admitted. It inlines; the rare cases (a denial, an idle
// restart, the end of time) are settled out of line by settle.
func (ps *Params) admit(tat State, a at, c uint64) (State, bool) {
	kh, kl, wait := ps.Waits(tat, a)
	next, carry := bits.Add64(uint64(tat), c, 0)
	if wait || carry != 0 || Behind(kh, kl, a) {
		return ps.Settle(tat, a, c, wait)
	}
	return State(next), true
}

// Settle is admit's rare cases, and the zero Params' every case: an
// event of 0 steps (c == 0) is never admitted.
func (ps *Params) Settle(tat State, a at, c uint64, wait bool) (State, bool) {
	kh, kl := bits.Mul64(uint64(tat), ps.p)
	switch {
	case wait || c == 0:
		return tat, false
	case Behind(kh, kl, a):
		return ps.restart(tat, a, c)
	}
	return tat, false // past the end of int64 time: never admit
}

// restart admits c steps when the TAT is behind now: the TAT restarts at
// the first step at or after now. u*e/p < 2^64 because e <= p, so uh < p.
// It refuses what would pass the end of int64 time.
func (ps *Params) restart(tat State, a at, c uint64) (State, bool) {
	q, r := a.ul, uint64(0) // whole-ns intervals have p == e == 1: now itself
	if ps.p != 1 {
		q, r = bits.Div64(a.uh, a.ul, ps.p)
	}
	carry := uint64(0)
	if r != 0 {
		q, carry = bits.Add64(q, 1, 0)
	}
	next, carry2 := bits.Add64(q, c, 0)
	if carry|carry2 != 0 {
		return tat, false
	}
	return State(next), true
}

// check returns the error for a cost of n events, or nil.
func (ps *Params) check(n int64) error {
	switch {
	case n < 0:
		return limit.ErrNegativeCost
	case uint64(n) > ps.burst:
		return limit.ErrCostExceedsBurst
	}
	return nil
}

// Step is the GCRA decision as a pure function: given the state s, now and
// a cost of n events, it returns the state to store and the Result. A denial
// returns s unchanged, so a store need not be written then.
//
// n < 0 returns limit.ErrNegativeCost and n > burst limit.ErrCostExceedsBurst,
// each with a Result that is not OK and RetryAfter limit.Never. n == 0 is
// admitted and changes nothing.
func (ps Params) Step(s State, now, n int64) (State, limit.Result, error) {
	if err := ps.check(n); err != nil {
		return s, limit.Result{RetryAfter: limit.Never}, err
	}
	c := uint64(n) * ps.J
	a := ps.At(now, c)
	next, ok := s, true
	if n != 0 {
		next, ok = ps.admit(s, a, c)
	}
	return next, ps.result(next, ok, a), nil
}

// result fills Remaining (whole events left after the decision) and
// RetryAfter (ns until the same request would be admitted).
func (ps *Params) result(tat State, ok bool, a at) limit.Result {
	r := limit.Result{OK: ok, Remaining: ps.remaining(tat, a)}
	if ok {
		return r
	}
	kh, kl, wait := ps.Waits(tat, a)
	if !wait {
		r.RetryAfter = limit.Never // refused only because time would overflow
		return r
	}
	// Admitted once tat*p <= (u+w)*e + slack*p: w = ceil((tat*p - u*e - slack*p)/e).
	dl, borrow := bits.Sub64(kl, a.lo, 0)
	dh := kh - a.hi - borrow
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
	r.RetryAfter = time.Duration(w)
	return r
}

// remaining returns the whole events available at a's now (none for the
// zero Params).
func (ps *Params) remaining(tat State, a at) int64 {
	if ps.J == 0 {
		return 0
	}
	q, _ := bits.Div64(a.uh, a.ul, ps.p) // floor(now) in steps
	if uint64(tat) <= q {
		return int64(ps.burst)
	}
	// Tokens at now: (b*j - (tat - now))/j steps, floored; now's fraction
	// of a step cannot lift the whole-event floor.
	if x := uint64(tat) - q; x < ps.BJ {
		return int64((ps.BJ - x) / ps.J)
	}
	return 0
}

// FullAt returns the greatest State whose bucket is full at now: s has its
// whole burst at now (RemainingAt(s, now) == Burst()) iff s <= FullAt(now),
// for a caller comparing many States against one now.
func (ps *Params) FullAt(now int64) State {
	if ps.J == 0 {
		return ^State(0) // the zero Params: RemainingAt is 0, its burst
	}
	uh, ul := bits.Mul64(uint64(now)^signBit, ps.e)
	q, _ := bits.Div64(uh, ul, ps.p) // floor(now) in steps, as remaining reads it
	return State(q)
}

// RemainingAt returns the whole events a request at now could take from s.
func (ps Params) RemainingAt(s State, now int64) int64 {
	a := ps.At(now, 0)
	return ps.remaining(s, a)
}

// TokensAt returns the events available at now in s, with their fraction:
// burst when full, below 0 while reservations are owed. It is for display;
// decisions never use floating point.
func (ps Params) TokensAt(s State, now int64) float64 {
	if ps.J == 0 {
		return 0
	}
	a := ps.At(now, 0)
	kh, kl := bits.Mul64(uint64(s), ps.p)
	if Behind(kh, kl, a) {
		return float64(ps.burst)
	}
	// tat*p - u*e is the lead in 1/e ns; an event is T = p*j/e ns, so the
	// lead is (tat*p - u*e)/(p*j) events.
	dl, borrow := bits.Sub64(kl, a.ul, 0)
	dh := kh - a.uh - borrow
	lead := (float64(dh)*0x1p64 + float64(dl)) / float64(ps.p) / float64(ps.J)
	return float64(ps.burst) - lead
}

// Reserve takes n events at now whether or not they are available: it
// returns the state as if they were admitted at now+wait, the earliest time
// Step would admit them (wait is 0 when Step admits them at now), so that
// reserved events count at their time to act and the bound holds with them
// counted there. ok is false, with s unchanged, when that time or the TAT
// would pass the end of int64 time. Errors are Step's.
//
// The next state is Step's admission at now+wait, so a reservation is
// exactly what polling Step every ns would get: it keeps the exact rate
// while n < burst, and a reservation of the whole burst is an idle restart
// at its time to act (see the package doc).
func (ps Params) Reserve(s State, now, n int64) (next State, wait time.Duration, ok bool, err error) {
	next, r, err := ps.Step(s, now, n)
	if err != nil || r.OK {
		return next, 0, err == nil, err
	}
	r0 := r.RetryAfter
	act := now + int64(r0)
	if r0 == limit.Never || act < now {
		return s, 0, false, nil
	}
	if next, r, _ = ps.Step(s, act, n); !r.OK {
		return s, 0, false, nil // only at the end of time
	}
	return next, r0, true, nil
}

// Undo gives back an admission that moved the state from before to after:
// if s is still after (nothing admitted since, or everything admitted since
// given back), it returns before and true. Otherwise it returns s and false:
// a later admission was decided on the units taken, and the TAT cannot say
// how much of them were refilled while the limiter was full since.
func (ps Params) Undo(s, before, after State) (State, bool) {
	if s == after {
		return before, true
	}
	return s, false
}

// StepOne is Step for n = 1 when only the decision is wanted: the state to
// store if one event is admitted at now, and whether it is. It decides
// exactly as Step(s, now, 1) does, without computing a Result, for tables
// that keep many States (package keyed).
func (ps *Params) StepOne(s State, now int64) (State, bool) {
	if ps.J == 0 {
		return s, false // the zero Params: Step refuses every n > 0
	}
	if ps.p == 1 {
		return ps.StepOneNs(s, now)
	}
	return ps.admit(s, ps.At(now, ps.J), ps.J)
}

// OneNs reports whether a step is one ns (p = e = 1: an interval of whole
// ns), where StepOneNs is StepOne.
func (ps *Params) OneNs() bool { return ps.p == 1 }

// StepOneNs is StepOne when OneNs holds, and inlines (StepOne does not):
// admit's 128-bit products are 64-bit: wait iff tat > u + bj - j; else the
// TAT, restarted at now if behind it, moves j steps on, unless that passes
// the end of int64 time.
func (ps *Params) StepOneNs(s State, now int64) (State, bool) {
	u, tat := uint64(now)^signBit, uint64(s)
	if tat > u && tat-u > ps.BJ-ps.J {
		return s, false
	}
	next, carry := bits.Add64(max(tat, u), ps.J, 0)
	if carry != 0 {
		return s, false
	}
	return State(next), true
}
