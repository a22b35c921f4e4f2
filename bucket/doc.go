// Package bucket is a lock-free token bucket with exact fractional tokens,
// whose whole state is 128 bits. Use it when a limiter needs more than
// Allow: reservations (Reserve, Wait), a rate or burst changed while it runs
// (SetRate, SetBurst), or fractional rates and costs. For Allow alone,
// package gcra is cheaper; for golang.org/x/time/rate's API, package rate is
// built on this one. See ExampleLimiter and ExampleReservation.
//
// A denial writes nothing. There is no floating point on any hot path: a
// token is a whole number of units and the bucket refills a whole number of
// units per nanosecond, so fractional rates (0.5 a second) and costs do not
// drift after any uptime. Time is int64 nanoseconds on a fixed-origin clock
// (package nanotime): each method has an ...At twin taking now; the plain
// form reads the Limiter's clock, nanotime.Now unless WithClock gave another.
// AllowNAt(now, 0) takes nothing and reports the whole tokens left. A
// parameter out of range is a *limit.ParamError.
//
// # Contract
//
// For a bucket refilling r tokens per second with burst b, the cost admitted
// with now values in any closed interval of length t is at most b + r*t,
// exactly, on every schedule: concurrent callers, stale or out-of-order now
// values, jumps of years, now anywhere in the int64 range. Reserved tokens
// count at their time to act (now + the wait); cancelled reservations and
// refunded admissions count only if they gave nothing back. A stale now
// never refills the bucket.
//
// The only roundings (a cost that is not a whole number of units, a rate
// change, a reservation's wait rounded up to a whole ns) are against the
// caller. A reservation whose time to act would pass math.MaxInt64 is
// refused; a refill that would pass it saturates at a full bucket.
//
// The state's layout and the exact arithmetic are described in the project's
// ARCHITECTURE.md.
package bucket
