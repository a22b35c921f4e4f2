// Package ulule is a github.com/ulule/limiter/v3 Store on cellrate: keep
// your middleware, change the store. Where you had
//
//	store := memory.NewStore()
//
// write
//
//	store, err := ulule.New(ulule.Options{})
//
// and pass it to limiter.New with your Rate as before; the stdlib, gin and
// fasthttp middlewares take the limiter unchanged. Keys live in a
// fixed-size, lock-free table per Rate (package keyed) instead of a map
// under a lock cleaned every 30 seconds: memory is chosen at New and a
// flood of new keys never grows it. See the Example.
//
// # The limit
//
// A Rate of Limit per Period is read as a token bucket: a key may take
// Limit at once, then one unit every Period/Limit, exactly, so over any
// span t it takes at most Limit + Limit*t/Period. The memory store counts
// in a fixed window opened by a key's first request and forgets the count
// when it expires, so a key may take 2*Limit within a moment across the
// expiry; the first Limit requests of a key are decided the same by both.
//
// # How each call maps
//
//   - Get(key, rate): Increment(key, 1, rate).
//   - Increment(key, count, rate): takes count units if all of them are
//     there (Reached false, Remaining what is left), else takes nothing
//     (Reached true, Remaining 0). Reset, in Unix seconds, is when the
//     key's bucket is full again: from then on the full Limit is there.
//     Decisions run on the monotonic clock; Reset follows a step of the
//     wall clock within a second.
//   - Peek(key, rate): the same Context without taking anything.
//   - Reset(key, rate): the key starts afresh with a full bucket, under
//     every Rate.
//
// # What cannot be kept
//
//   - A refused request is not counted: the memory store adds it to the
//     count anyway, here it takes nothing, so a refused Increment of 5 with
//     3 left leaves those 3 for the next request.
//   - Peek reports Reached when no unit remains (the next Get would be
//     refused); the memory store reports it only once a request was
//     refused.
//   - The memory store keeps one count per key whatever the Rate; here each
//     Rate has its own table, so a key limited under two Rates is held to
//     each apart.
//   - Reset is remembered for at most MaxResets keys at once. Past that, a
//     Reset forgets a remembered key whose bucket is full again under every
//     Rate (it goes back to its state before its Reset, which admits no
//     more than a full bucket); if it finds none, it returns
//     ErrTooManyResets and resets nothing, so resetting other keys never
//     gives a key back what it spent since its own Reset.
//   - StoreOptions' Prefix and CleanUpInterval have no use here: each store
//     has its own tables and idle keys need no clean-up.
//
// # The bound
//
// Each key is held to its bucket's bound between Resets, exactly, under
// any number of concurrent callers, also when more keys are busy at once
// than Capacity holds: package keyed then keeps what an evicted key owes,
// so a flood of new keys can delay other keys but never frees one from
// its debt.
package ulule
