// Package packed64core is package packed64's implementation: its limiters
// and tables, and the pure steps on 16-byte BucketState and WindowState
// (and on 8-byte words beside a shared HighWater) that they run. Package
// packed64 shows users the limiters, package step the steps, and package
// keyed uses the window's steps whole. What follows is what package
// packed64 promises, with the names this package gives the parts.
//
// Bucket and Window are single limiters, Buckets and Windows tables of them
// indexed by int. A denial writes nothing. Time is int64 nanoseconds on a
// fixed-origin clock (package nanotime): each method has an ...At twin taking
// now; the plain form reads the limiter's clock, nanotime.Now unless
// WithClock gave another. A parameter out of range is a *limit.ParamError.
//
// # Contract
//
// A bucket of events per period and burst b admits at most
// b + (t + u)*events/period tokens over the times callers pass in any
// interval of length t, with u its time unit (Unit, at most 1/256 of a
// token's refill time), on any schedule: concurrent callers, times stale, out
// of order or jumping, anywhere in the int64 range. A full bucket admits
// exactly b tokens at one instant, and Remaining is exactly what an immediate
// request admits. Over time it refills at least 255/256 of the exact rate.
//
// A window of limit L and length W counts as package window does (the same
// estimate and integer test, on times rounded down to whole units, with W
// rounded up to a whole number of units): at most L in any window it counts,
// at most 2L in any interval of length W.
//
// Bucket and Window are limit.Members: TakeAt returns a Receipt, and Refund
// puts the state back exactly when it is still the one the admission left,
// so in a limit.All each member's bound holds over the admissions it kept.
//
// A word keeps only the low bits of its time, read against a reference time
// (a BucketState's or WindowState's Ref; the cells keep it in a HighWater).
// A word idle for longer than its Wrap can be read as used more recently than
// it was: never more admissions, sometimes fewer until its next admission
// (the chance is below 2^-11 for a word idle a random long time).
//
// Time stops at math.MaxInt64: after it a bucket refills nothing and a window
// forgets nothing, and a request that could only fit later gets a RetryAfter
// of limit.Never.
//
// What the words leave out: a bucket word holds no debt beyond an empty
// bucket, so there is no Reserve or Wait, and the parameters fix the unit
// every word is read in, so there is no SetRate or SetBurst. Package bucket
// has both, in 128 bits.
//
// The layouts, the proof that a wrapped time never admits more, and the
// derivation of both bounds are in the project's ARCHITECTURE.md.
package packed64core
