// Package golimiter is a github.com/sethvargo/go-limiter Store on
// cellrate: keep your middleware, change the store. Where you had
//
//	store, err := memorystore.New(&memorystore.Config{Tokens: 10, Interval: time.Minute})
//
// write
//
//	store, err := golimiter.New(&golimiter.Config{Tokens: 10, Interval: time.Minute})
//
// and pass it to httplimit.NewMiddleware (or call Take) as before. Keys
// live in a fixed-size, lock-free table (package keyed) instead of a map
// under a lock swept every few hours: memory is chosen at New and a flood
// of new keys never grows it. See the Example.
//
// # The limit
//
// Tokens per Interval is read as a token bucket: a key may take Tokens at
// once, then one token every Interval/Tokens, exactly (integer time, no
// float rate), so over any span t it takes at most Tokens + Tokens*t/Interval.
// memorystore refills the whole bucket at each tick of Interval counted
// from the key's first request, so a key may take 2*Tokens across a tick
// within a nanosecond; the first Tokens requests of a key are decided the
// same by both.
//
// # How each call maps
//
//   - Take: Burst's extra tokens first, then one token of the key's bucket.
//     tokens is the key's limit; remaining its whole tokens after the take
//     (extra ones included); reset, in Unix ns, is when the bucket is full
//     again after an admission, or holds a token again after a denial (so
//     the middleware's Retry-After is when a retry succeeds).
//   - Get: the key's limit and the tokens it could take now, changing
//     nothing.
//   - Set: the key gets its own limit, tokens per interval (at most MaxSet
//     keys and MaxLimits distinct limits, then ErrTooMany).
//   - Burst: extra tokens for the key, valid for one interval of its limit
//     from the call (at most MaxBurst keys at once, then ErrTooMany).
//   - Close: every later call returns limiter.ErrStopped.
//
// # What cannot be kept
//
//   - Get on a key never seen returns the default limit and a full bucket,
//     where memorystore returns zeros: a fixed table does not tell a new key
//     from an idle one (both decide the same).
//   - Set does not refill: a key's bucket under a limit it used before is
//     as it left it. Refilling on Set would let a caller that can trigger
//     Set forgive its own debt.
//   - Burst's tokens lapse one interval after the call, not at a tick of
//     the key's bucket (a cellrate bucket has no ticks). Burst on a key
//     memorystore does not hold raises that key's limit for good there;
//     here the tokens are extra for one interval, as for any key.
//   - reset is when the bucket refills, not the end of a tick.
//   - remaining is read at the take's own time, so it can be one less than
//     memorystore's when that time is a few ns behind another take's
//     (concurrent callers), or when Interval/Tokens is not a whole number
//     of ns (the bucket refills in steps of about 1ns). Which takes are
//     admitted is exact either way.
//
// # The bound
//
// Each key is held to its bucket's bound plus the extra tokens Burst gave
// it, exactly, under any number of concurrent callers, also when more keys
// are busy at once than Capacity holds: package keyed then keeps what an
// evicted key owes, so a flood of new keys can delay other keys but never
// frees one from its debt.
package golimiter
