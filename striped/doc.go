// Package striped spreads hot shared state over one cache line a P
// (GOMAXPROCS slot), so that goroutines on different Ps do not write the
// same line. Use Counter for a sum many cores add to, and Limiter for one
// limit that many cores hit at once, where a single limiter's cache line
// would bounce between them. See ExampleCounter and ExampleLimiter.
//
// Counter is an int64 sum with a cell a P: Add costs a P pin and an
// unshared add; Load sums the cells and is not linearizable (see Counter
// for exactly what it guarantees).
//
// Limiter is a token bucket whose tokens reach callers through a cache a P
// that borrows batches from one shared bucket (package bucket's step on a
// 128-bit cell). Contract: for rate r and burst b it never admits more than
// b + r*t in any interval of length t, exactly, on any schedule; it admits
// less than a single bucket would by at most the tokens other Ps' caches
// hold, and hands an idle P's tokens to Ps that need them (see Limiter).
// Admissions from a P's cache write only that P's line, and denials write
// nothing shared.
//
// Both find the current P's slot with runtime.procPin, reached by a
// linkname, and both keep working when GOMAXPROCS changes while they are in
// use: their per-P tables only grow, and slots of Ps that GOMAXPROCS removed
// keep their contents.
//
// Time for Limiter is int64 nanoseconds on a fixed-origin clock (package
// nanotime). Each method has an ...At twin taking now; the plain form reads
// the Limiter's clock.
package striped
