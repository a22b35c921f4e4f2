// Package redis keeps cellrate's limiters in Redis, so that one limit is
// shared by every process and machine that uses the same Redis (a single
// server or a Redis Cluster), and adds a two-tier limiter whose processes
// answer most requests without a round trip.
//
// It is a module of its own (github.com/cellrate/cellrate/redis, on
// github.com/redis/go-redis/v9), so the main module gains no dependency.
// Import go-redis under another name:
//
//	import goredis "github.com/redis/go-redis/v9"
//
// # Limiters in Redis
//
// NewGCRA and NewWindow return a Limiter: package gcra's or package
// window's integer rules run by a Lua script on the server that holds the
// key, one round trip per decision (EVALSHA, and EVAL when a server
// answers NOSCRIPT: after a restart, on a new cluster node). Decisions,
// Remaining, RetryAfter and the state kept are the same as those of the Go
// step (gcra.Params.Step, window.Params.Step) at the same times, so the
// same exact bounds hold across all callers; the tests run random
// schedules with stale, repeated and jumping times through both, on a real
// server, and compare every result and state.
//
// Lua numbers are IEEE doubles, exact for integers below 2^53 only, and
// nanoseconds since 1970 do not fit. The scripts keep every number far
// below 2^53: a time is Unix seconds and nanoseconds apart; a GCRA key
// holds its TAT as steps from an origin of its own, moved to now on each
// write; and the products and quotients the rules need (up to 100 bits
// wide) go through one exact multiply-divide that estimates in doubles and
// corrects the quotient from a remainder computed exactly in 26-bit
// halves. This bounds the parameters: a GCRA's burst times its interval
// below 2^48 steps (about 3.2 days), a fractional interval's reduced ratio
// below 2^48, a window below 2^50 ns (about 13 days).
//
// # Time
//
// A decision's time is the clock of the Redis server holding the key
// (TIME, inside the script), so the calling machines need no synchronised
// clocks; AllowNAt takes the caller's time instead, for tests. A time
// behind the state's (a failover to a replica whose clock is behind, a
// caller's stale time) never admits more than the bound: the rules treat
// it as the Go steps do.
//
// # Keys
//
// A key's state lives at prefix + "{" + key + "}": the braces are a hash
// tag, so everything kept for one key is in one Redis Cluster slot, and a
// decision touches one key on one node. A key leaves Redis (by its expiry)
// once its state is the same as no key: a GCRA full again, a window two
// windows past its start. Redis drops a key only when its own clock has
// passed the expiry, and TIME is not behind that clock, so no decision
// finds a key gone whose state still counted; WithGrace keeps keys longer,
// for a caller's time or a clock stepped back.
//
// # Failures
//
// A Limiter fails closed: on an error from Redis (down, stopped, a
// failover under way, the timeout passed) it returns a Result that is not
// OK and the error. Every call is bounded by WithTimeout (go-redis applies
// a context's deadline only on a client with ContextTimeoutEnabled; its
// ReadTimeout otherwise). On a network error through a ClusterClient the
// limiter asks go-redis to reload the slot map, which go-redis otherwise
// does once a minute, so decisions find a promoted replica at once. Redis
// replicates asynchronously: a failover can lose the last decisions
// before it, which then count as never made. A Redis restarted without
// persistence has lost every key: each key of a Limiter is then new, and
// can admit up to its burst (a window: its limit) more than the bound,
// once per restart. Persistence (appendonly with fsync everysec) narrows
// this to the decisions of the last second.
//
// TwoTier's policy is its own: see its documentation.
package redis
