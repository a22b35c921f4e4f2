// Package chirate is a github.com/go-chi/httprate LimitCounter on
// cellrate: keep your middleware and options, add one option. Where you
// had
//
//	r.Use(httprate.LimitBy(100, time.Minute, keyFn))
//
// write
//
//	counter, err := chirate.New(chirate.Options{Capacity: 100_000})
//	r.Use(httprate.LimitBy(100, time.Minute, keyFn, httprate.WithLimitCounter(counter)))
//
// httprate's own counter keeps two maps that grow with every key seen in
// a window; this one keeps the counts in a fixed-size, lock-free table
// (package keyed): memory is chosen at New and a flood of new keys never
// grows it. See the Example.
//
// # What httprate reads, kept exact
//
// httprate decides each request from Get's two counts, the current
// window's and the previous one's (its estimate weighs the previous count
// by the share of it still inside the sliding window), then calls
// IncrementBy; it holds its own lock around the pair. So the counter's
// one duty is to return exactly what was added to each window of each key,
// and to never lose a count: a lost count is a request admitted over the
// limit. Each key's two counts live in one keyed sliding-window counter
// whose limit is MaxCount, read at window starts only: at the start of a
// window the counter weighs the previous window in full, so its estimate
// is the sum of the two counts, and at the start of the next window it is
// the current count alone. Two reads give both counts, integers, exactly.
//
// # How each call maps
//
//   - Config(limit, window): makes the table for that window, empty.
//     httprate's NewRateLimiter calls it; give each RateLimiter its own
//     Counter. Counts are never forgotten: a second Config of the same
//     window keeps the table, one of another window makes every call
//     fail with ErrReconfigured.
//   - IncrementBy(key, window, n): adds n to the key's count in that window
//     (or in the one before, for a request whose window was read just
//     before the boundary). Increment is IncrementBy with n = 1.
//   - Get(key, window, previous): the two counts, changing nothing.
//
// # What cannot be kept
//
//   - Room: a table holds Capacity keys whose windows count something. A
//     new key finding no room gets ErrFull from IncrementBy, counts
//     nothing, and httprate answers with its error handler (428 unless
//     WithErrorHandler says otherwise): the counter refuses the new key
//     rather than forget a busy one. A key's slot is free again once its
//     two windows have passed with nothing counted, and one more window
//     (10ms, if longer) after them.
//   - Size: a key's two windows count at most MaxCount together; past it
//     IncrementBy returns ErrCount (so limits up to MaxCount/2 are exact).
//   - Windows: a Counter's windows start at multiples of the window on the
//     clock, as httprate aligns every counter but its own (which aligns
//     them to its start time), so X-RateLimit-Reset can differ between the
//     two; the counts and the decisions do not. A window start outside
//     int64 nanoseconds (1678 to 2262), or within about two windows of their
//     ends, is a *limit.ParamError.
//   - Clock steps: the windows are on the wall clock httprate reads, and a
//     key counts its latest two. When the clock steps back, a key counted
//     two or more windows ahead of it reads high in Get, and IncrementBy
//     returns ErrCount for it (counting nothing), until the clock is back
//     there; new keys count as usual. After a step of more than 32,000
//     windows ahead and back, any key's counts can read high, up to
//     MaxCount (httprate then denies), for up to as long as the step.
//     What a key's two windows counted never reads low (httprate's own
//     counter forgets it instead).
package chirate
