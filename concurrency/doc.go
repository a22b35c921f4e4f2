// Package concurrency caps the requests in flight: a bulkhead with a fixed
// limit (NewFixed), or a limit that adapts to the latency of what it
// protects (New, with Vegas's rule or the one WithGradient or WithAIMD
// picks), in the manner of Netflix's concurrency-limits. Use it where a
// rate limit is the wrong unit: in front of a service whose capacity is a
// number of workers, connections or threads, so that past that number
// requests queue and latency grows. An adaptive limit finds that number by
// itself and keeps the service just below the queueing regime, refusing
// the rest at once instead of letting every request wait. See
// ExampleNewFixed and ExampleNew.
//
// Acquire (waiting, with a context) or TryAcquire (never waiting) admits a
// request and returns a Token; Token.Release gives the slot back and tells
// the limit's algorithm the request's latency and Outcome. In an HTTP
// server, place it after the rate limits: acquire once they admit, refuse
// with 503 when it does not, release when the handler returns
// (ExampleToken_Release shows the shape).
//
// # Contract
//
//   - At most Limit requests are in flight at once, counted exactly under
//     any concurrency: admission is a compare-and-swap on the in-flight
//     count. When an adaptive limit falls, requests already in flight stay
//     admitted; no new one is until the count is below the new limit.
//   - Each admission's Token releases exactly once. Copies of a Token are
//     the same hold; the first Release of any of them frees the slot and
//     later ones return false and change nothing, even after the slot has
//     been handed to another request (each slot carries a generation).
//   - No slot leaks on the paths the package controls: an Acquire whose
//     context ends while waiting takes nothing, and Do releases when its
//     function panics. A Token that is never released holds its slot
//     forever: release in a defer (tok.Release(Ignored) deferred first,
//     then the real outcome released explicitly, is a no-op on the success
//     path and a release on a panic).
//   - Releasing takes no lock (unless goroutines are waiting in Acquire,
//     when it takes the wait queue's lock to wake one). Acquire and
//     TryAcquire allocate nothing; a blocked Acquire allocates its channel.
//   - The zero Limiter admits nothing (Acquire returns ErrZero); the zero
//     Token releases nothing.
//
// # Adaptive limits
//
// Releases are sampled in windows: a window closes at the first release
// after it has lasted twice the previous window's mean latency (within
// the bounds of WithWindow) and holds enough samples; the release that
// closes it runs the algorithm once, alone, and the limit takes its
// result, clamped to [min, max] (WithLimits). A window without loss whose
// requests never reached half the limit leaves it alone: their latency
// says nothing about a higher one. Releases as Ignored are not sampled; a
// Dropped release of a request admitted before the limit last fell is a
// sample but not a loss, so one stall's burst of timeouts backs off once.
// Vegas and Gradient estimate the no-load latency as the least mean
// latency of a window, and re-measure it every WithHistory windows by
// halving the limit until the requests in flight have drained to half (a
// probe of a window or a few), since a service that became slower would
// otherwise keep an estimate that is too low for good.
//
// # Time
//
// Times are int64 nanoseconds (package nanotime). TryAcquire and Release
// read the Limiter's clock (WithClock); TryAcquireAt and ReleaseAt take
// the time, for tests and simulations. A Limiter's first window starts at
// its clock's reading in New.
package concurrency
