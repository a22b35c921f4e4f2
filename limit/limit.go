// Package limit holds what every cellrate limiter shares: the Result of a
// decision, the errors for costs no limiter can admit, ParamError for a
// parameter out of range, the Limiter interface for code that takes any
// limiter, and All, which admits a request only when every one of its
// limiters (say a per-key limit and a global limit) admits it. See ExampleAll
// and ExampleParamError.
//
// Time is an int64 count of nanoseconds on the monotonic clock of package
// nanotime (or any clock with a fixed origin whose values the caller feeds in
// order). Limiters never read the clock inside an ...At method.
package limit

import "time"

// Never is the RetryAfter of a request that can never be admitted, and the
// Remaining of a limiter with no bound: the largest value of either type.
const Never = time.Duration(1<<63 - 1)

// Result is the outcome of one decision.
type Result struct {
	// OK reports whether the request was admitted.
	OK bool
	// Remaining is the number of whole units still available right after
	// the decision.
	Remaining int64
	// RetryAfter is how long after now the same request could first be
	// admitted if nothing else were admitted meanwhile; 0 when OK, Never
	// when it can never be.
	RetryAfter time.Duration
}

// Limiter is implemented by every limiter in cellrate: code that decides
// through any of them (a middleware, a test) takes a Limiter.
type Limiter interface {
	// AllowAt reports whether one unit may be taken at time now, and takes it if so.
	AllowAt(now int64) bool
	// AllowNAt takes n units at time now if all n are available. It returns
	// ErrNegativeCost or ErrCostExceedsBurst, with a Result that is not OK,
	// for an n that could never be admitted.
	AllowNAt(now, n int64) (Result, error)
}

// Member is a Limiter that can take part in an all-or-nothing composition
// (All): it admits as AllowNAt does, and it can give back exactly what one of
// its own admissions took.
//
// Why a Receipt and not just a cost: a limiter whose capacity is capped (a
// bucket, a GCRA) forgets the refill it wasted while full, so "give back n
// units" alone cannot be exact. If another caller was admitted in between at
// a later time, adding n back can hand out refill that the limiter, had the
// refunded admission never happened, would have wasted at its cap, and so
// break the limiter's bound. The Receipt carries what the admission changed,
// so the member can undo exactly that.
type Member interface {
	Limiter
	// TakeAt is AllowNAt(now, n) that also returns, when it admits n > 0, a
	// Receipt of what the admission changed. Otherwise the Receipt is the
	// zero Receipt, which Refund ignores.
	TakeAt(now, n int64) (Result, Receipt, error)
	// Refund gives back what the admission that returned rc took, so that
	// the member's bound holds over the admissions not refunded. It is
	// exact (the member ends as if that admission had never happened) at
	// least when no other admission on the member came between the two,
	// which is the case All makes common by refunding at once; each
	// member's doc states when else it is exact and what it keeps
	// otherwise: never more capacity than exactness would give. Each
	// Receipt must be refunded at most once, and only to the member that
	// issued it.
	Refund(rc Receipt)
}

// Receipt records one admission of a Member, for Refund. Its fields are
// filled by the member that admitted and read only by it: Before and After
// are words of that member's state in its own encoding.
type Receipt struct {
	// At and N are the admission's now and cost; N == 0 marks a Receipt
	// that refunds nothing.
	At, N int64
	// Before and After are the member's state words just before and just
	// after the admission.
	Before, After [2]uint64
}
