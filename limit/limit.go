// Package limit holds what every cellrate limiter shares: the Result of a
// decision, the errors for costs no limiter can admit, and the Limiter
// interface that stress tests and benchmarks drive them through.
//
// Time is an int64 count of nanoseconds on the monotonic clock of package
// nanotime (or any clock with a fixed origin whose values the caller feeds in
// order). Limiters never read the clock inside an ...At method.
package limit

// Never is the RetryAfter of a request that can never be admitted.
const Never = int64(1<<63 - 1)

// Result is the outcome of one decision.
type Result struct {
	// OK reports whether the request was admitted.
	OK bool
	// Remaining is the number of whole units still available right after
	// the decision.
	Remaining int64
	// RetryAfter is how many nanoseconds after now the same request could
	// first be admitted if nothing else were admitted meanwhile; 0 when OK.
	RetryAfter int64
}

// Limiter is implemented by every limiter in cellrate.
type Limiter interface {
	// AllowAt reports whether one unit may be taken at time now, and takes it if so.
	AllowAt(now int64) bool
	// AllowNAt takes n units at time now if all n are available. It returns
	// ErrNegativeCost or ErrCostExceedsBurst, with a Result that is not OK,
	// for an n that could never be admitted.
	AllowNAt(now, n int64) (Result, error)
}
