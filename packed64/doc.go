// Package packed64 holds rate limiters whose whole state is one uint64: a
// token bucket (BucketWord) and a sliding-window counter (WindowWord). They
// are for programs that keep millions of limiters (8 bytes of state each,
// with the parameters shared) or that run where only 64-bit CAS is
// lock-free.
//
// Each limiter is a pure step over its state (BucketParams.Step,
// WindowParams.Step: a word and the reference time it is read against, see
// below) and a cell that runs it with sync/atomic: one load, the step, one
// compare-and-swap, retried on conflict after a short spin; a denial writes
// nothing. Bucket and Window are single cells, Buckets and Windows tables
// of cells sharing one set of parameters. Steps, PackBucket, UnpackBucket,
// PackWindow and UnpackWindow are pure, so a state (16 bytes) or a word (8
// bytes, with a HighWater of your own) can live in a map, a file or a
// remote store.
//
// Time is int64 nanoseconds on a fixed-origin clock (package nanotime).
// Each method has an ...At twin taking now; the plain form reads the
// limiter's clock, nanotime.Now unless WithClock gave another. A parameter
// out of range is a *limit.ParamError.
//
// Bucket and Window are limit.Members: TakeAt returns a Receipt of the
// words an admission moved between, and Refund puts the old word back
// exactly when the word is still the one the admission left (the pure
// BucketParams.Undo and WindowParams.Undo), so in a limit.All each
// member's bound holds over the admissions it kept.
//
// What the words leave out: a bucket word has no room for debt beyond an
// empty bucket (its unit is chosen so that a full bucket nearly fills the
// 24-bit deficit), so there is no Reserve or Wait; and the parameters set
// the unit every word of a table is read in, so there is no SetRate or
// SetBurst: changing them would reinterpret every word. Make new limiters
// (package bucket has both, in 128 bits).
//
// # Time in a word
//
// A word holds time in units of 2^s ns counted from time 0, and only the
// low bits of that count (40 bits for the bucket, 28 for the window). s is chosen per limiter as small as
// the layout allows, so the unit is as fine as the other fields let it be;
// the field wraps after Wrap() = 2^(bits+s) ns (BucketParams.Wrap,
// WindowParams.Wrap), from about 18 minutes for the fastest buckets to years
// for slow ones.
//
// Reading a wrapped field needs a reference time ref at or after the time
// of the step that wrote the word: the Ref of a BucketState or WindowState.
// The step takes the full time to be the latest time at or before ref whose
// low bits match the field, and returns a state whose Ref is right for the
// word it wrote. The cells keep only the word, and ref in a HighWater,
// raised before each write when the writer's now is more than Slack() past
// it, and read after the word, so every word they load was written no later
// than HighWater + Slack (saturated at math.MaxInt64).
//
// Claim: no schedule of times, however it jumps or goes backwards and
// however long a word sits idle, makes a word admit more than the same
// limiter with an unwrapped time field would from the same word.
//
// Proof: let t be the (full) time the word was written with and r = ref >= t.
// The decoded time t' is the largest time <= r congruent to t modulo the
// wrap, so t' >= t (t is one such time). A now at or after t' sees the time
// elapsed since t' instead of since t: no more than the truth. A bucket's
// tokens and the fraction of a window that has passed only grow with elapsed
// time, so reading less elapsed time never admits more. A bucket's now
// before t' sees the deficit plus t' - now, at least what it lacked at now
// had it been written at t; a window's now before t' is decided as at t', where
// its estimate is largest, or denied. QED.
//
// What it costs: if a word sits idle for longer than Wrap() - Slack(), t'
// can be later than t by a multiple of the wrap; the limiter then acts as
// if it had last been used at t': a bucket written at its last use with
// fewer than its burst of tokens refills late, a window still counts units
// it would have forgotten. The first admission after that rewrites the time.
// The chance that a word idle for a random long time is read inside such a
// span is below (Slack + a full refill or two windows) / Wrap, at most
// 2^-12 + 2^-14 (TestWrapDips measures it for a bucket and a window).
//
// # The ends of time
//
// Times may be any int64, math.MinInt64 and math.MaxInt64 included. No sum
// of a time and a slack, window or wait wraps: the HighWater's zero value is
// the start of time (math.MinInt64), so it suits any clock, and its
// reference, the mark plus the slack, saturates at math.MaxInt64, which is at
// or after every time a word is written with. The claim above and the
// bounds below hold at both ends. Time stops at math.MaxInt64: a bucket
// refills nothing after it and a window forgets nothing, so a request that
// first fits in a unit beginning after math.MaxInt64, or more than
// math.MaxInt64 ns after now, gets a RetryAfter of limit.Never.
//
// # The bucket's bound
//
// In units, a bucket word is its empty time z = t + deficit: at unit v it
// lacks max(0, z - v) of full (a deficit of 0, which no admission writes,
// is full at any time: z is minus infinity). Admitting c units at v needs
// max(z, v) + c - v <= capacity and leaves z' = max(z, v) + c, written at
// max(t, v): a stale now, before t, keeps t (the time never moves back, so
// no refill is credited twice) and is charged the refill between it and t,
// which the bucket did not have then, as in packages gcra and bucket.
// Decoding a wrapped time only raises z. So each admission raises z by at
// least its cost and leaves it at most its own v + capacity, and the
// admissions at times (in units) in [a, b], in whatever order they come,
// cost at most b - a + capacity.
//
// A unit is 2^s ns. The bucket's 24-bit field holds the deficit below a
// full bucket, so the zero word is a full bucket whatever the time. A token
// refills in T = period/events ns, at least 256 units. Every token costs
// the same whole number of units, c = ceil(T/u) (u the unit), n tokens cost
// n*c, and the capacity is burst*c, the finest unit being the one where
// that fits the field; times are rounded down to whole units. So a full
// bucket admits exactly burst tokens at one instant, one at a time or
// together, and Remaining, floor((capacity - deficit)/c), is exactly what an
// immediate request admits. The rounding that remains is in the limiter's
// favour: a token refills in c*u >= T ns, at most one unit (1/256 of T) late,
// so over time a bucket admits at least (c-1)/c of events per period
// and never more. Over every interval [a, b] of the times callers pass, in
// any order, stale or going backwards, and with many goroutines, the
// admissions' units cost at most B - A + burst*c, with A, B the units of a
// and b, B - A < (b - a)/u + 1; each token costs c >= T/u, so a bucket
// admits at most burst + (b - a + u)/T tokens: the exact token-bucket bound
// within one unit. TestBucketBoundStaleTimes checks it
// exactly over schedules with stale, repeated and out-of-order times,
// TestBucketBound over schedules with idle gaps of whole wraps, and
// TestBucketCellsAtTheEnds and FuzzBucketsShared at both ends of int64 time
// and across the buckets of a table. TestBucketBound also logs how much of
// what an exact rational bucket admits from the same requests a bucket
// admits (costs round up, times down), with and without idle gaps aimed at
// whole wraps, where the dips above fall.
//
// # The window's bound
//
// A window measures its length in units too, rounding it up to a whole
// number of units (at most 1 part in 4096 longer), and counts with 18 bits.
// On times rounded down to whole units it is exactly package window's
// counter: the same estimate, the same exact integer test, the same error
// bound against a sliding log on schedules whose times never go backwards,
// which in nanoseconds holds for every interval of the rounded window plus
// one unit. As in package window, a stale now never creates capacity: in
// the window before the current one it is decided as at the current
// window's start, where the estimate is largest, and counted in that
// previous window; before it, nothing is admitted. So every window counts
// only units at caller times (in units) inside it, at most the limit, and
// the windows holding units never overlap (package window's doc has the
// proof): over the times callers pass, stale, repeated or out of order, a
// window admits at most L*(ceil(T/W)+1) <= 2L + L*T/W units in any interval
// of T units, 2L in any W. Decoding a wrapped start later than the true one
// (by whole wraps, far more than two windows) moves the windows counted from
// then on later; their counts still include the old units, so they hold at
// most as many caller times as they count, and stay disjoint from the old
// windows. TestWindowBoundStaleTimes checks this exactly on schedules with
// stale, repeated and out-of-order times, through Step and through a
// Window; TestWindowCellsAtTheEnds and FuzzWindowsShared at both ends of
// int64 time and across the counters of a table.
package packed64
