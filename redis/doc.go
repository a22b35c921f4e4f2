// Package redis shares one rate limit among every process and machine that
// uses the same Redis (a single server or a Redis Cluster). Use NewGCRA
// (a token bucket: a rate and a burst) or NewWindow (at most a limit per
// sliding window) when every decision may cost a round trip to Redis; use
// NewTwoTier when it may not: each process borrows units in batches and
// answers most requests without a round trip, with the same global bound.
// See ExampleNewGCRA, ExampleNewWindow and ExampleNewTwoTier.
//
// It is a module of its own (github.com/cellrate/cellrate/redis, on
// github.com/redis/go-redis/v9), so the main module gains no dependency.
// Import go-redis under another name:
//
//	import goredis "github.com/redis/go-redis/v9"
//
// # Contract
//
// A Limiter decides each request with one call to Lua on the server that
// holds the key: the same integer rules, decisions, Remaining and
// RetryAfter as package gcra's or package window's limiter at the same
// times, so the same exact bounds hold across all callers together. On
// Redis 7 and later that Lua is a Function library (named cellrate_ and a
// hash), loaded by the Limiter on every master the first time a node
// lacks it (a new server, one restarted empty, a node new to the cluster)
// and called with FCALL; on an older server, or one that will not load it
// (an ACL without FUNCTION), it runs as a script (EVALSHA).
// The server keeps each library until FUNCTION DELETE or FLUSH: one per
// GCRA parameter set (events, period, burst, grace) and one per window
// length and grace, whatever its limit. Many distinct GCRA rates (a rate
// per tenant, say) are as many libraries; one deleted is loaded again by
// the next decision that needs it. A GCRA's SetRate loads one per rate
// used: give an AIMD few distinct rates (round them, as its Example does).
// A limiter's rate can change while it runs (SetRate, SetRateAt: what
// package adaptive's AIMD drives; a TwoTier's too), with the bound stated
// there: a window compares its counts with the new limit; a GCRA key
// records the rate it was written at and carries the events it owes to
// the rate of the next decision made under another, so a change never
// frees a burst. The
// time of a decision is the Redis server's clock, so the calling machines
// need no synchronised clocks. A time behind the state's (a failover to
// a replica whose clock is behind) never admits more than the bound.
// Decisions one process makes at once are sent together, in pipelines per
// Redis node (a few in flight at once), without waiting for company.
//
// A key's state lives at prefix + "{" + key + "}": the braces are a hash
// tag, so a key's state is in one Redis Cluster slot and keys spread over
// the cluster (a prefix with braces is refused: the hash tag must be the
// key's, and a braced prefix would put every key in one slot). A key
// leaves Redis by its expiry once its state is the same as no key (a GCRA
// full again, a window two windows past its start); WithGrace keeps keys
// longer, for callers' times behind the server's.
//
// # Failures
//
// A Limiter fails closed: on an error from Redis (down, stopped, a
// failover under way, the timeout passed) it returns a Result that is not
// OK and the error. WithTimeout bounds every call (go-redis applies a
// context's deadline only on a client with ContextTimeoutEnabled; its
// ReadTimeout otherwise). After a network error through a ClusterClient
// the limiter asks go-redis to reload the slot map, so decisions find a
// promoted replica at once. Redis replicates asynchronously: a failover can
// lose the decisions its replica had not received (its replication lag,
// usually under a millisecond; all of them if the replica was not yet
// linked), which then count as never made: a key can admit what they
// admitted once more, at most its burst (a window: its limit), once per
// failover. A Redis restarted without persistence has lost every key: each
// key of a Limiter is then new, and can admit up to its burst (a window:
// its limit) more than the bound, once per restart; persistence
// (appendonly, fsync everysec) narrows this to the decisions of the last
// second. A SIGSTOPped or slow server costs errors, never admissions: a
// decision whose reply came too late was denied, and the units it took are
// lost. TwoTier's policies are its own: see its documentation.
//
// # Exact arithmetic in Lua
//
// Lua numbers are IEEE doubles, exact for integers below 2^53 only, and
// nanoseconds since 1970 do not fit. The scripts keep every number far
// below 2^53: a time is Unix seconds and nanoseconds apart; a GCRA key
// holds its theoretical arrival time as steps from an origin of its own,
// moved to now on each write; and the wide products and quotients the
// rules need go through one exact multiply-divide that estimates in
// doubles and corrects the quotient from a remainder computed exactly in
// 26-bit halves. This bounds the parameters: a GCRA's burst times its
// interval below 2^48 steps (about 3.2 days), a fractional interval's
// reduced ratio below 2^48, a window below 2^50 ns (about 13 days).
package redis
