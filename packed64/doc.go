// Package packed64 holds rate limiters whose whole state is one uint64: a
// token bucket (BucketWord) and a sliding-window counter (WindowWord). They
// are for programs that keep millions of limiters (8 bytes of state each,
// with the parameters shared) or that run where only 64-bit CAS is
// lock-free.
//
// Each limiter is a pure step over its word (BucketParams.Step,
// WindowParams.Step) and a cell that runs it with sync/atomic: one load, the
// step, one compare-and-swap, retried on conflict; a denial writes nothing.
// PackBucket, UnpackBucket, PackWindow and UnpackWindow are pure, so a word
// can live in a map, a file or a remote store.
//
// # Time in a word
//
// A word holds time in units of 2^s ns counted from an origin kept in the
// parameters, not in the word, and only the low bits of that count (40 bits
// for the bucket, 28 for the window). s is chosen per limiter as small as
// the layout allows, so the unit is as fine as the other fields let it be;
// the field wraps after Wrap() = 2^(bits+s) ns (BucketParams.Wrap,
// WindowParams.Wrap), from about 18 minutes for the fastest buckets to years
// for slow ones.
//
// Reading a wrapped field needs a reference time ref at or after the time
// of the step that wrote the word. The step takes the full time to be the
// latest time at or before ref whose low bits match the field. The cells keep
// ref in a HighWater, raised before each write when the writer's now is more
// than Slack() past it, and read after the word, so every word they load was
// written no later than HighWater + Slack.
//
// Claim: no schedule of times, however it jumps or goes backwards and
// however long a word sits idle, makes a word admit more than the same
// limiter with an unwrapped time field would from the same word.
//
// Proof: let t be the (full) time the word was written with and r = ref >= t.
// The decoded time t' is the largest time <= r congruent to t modulo the
// wrap, so t' >= t (t is one such time). The step computes the time elapsed
// since t' instead of since t: no more than the truth. A bucket's tokens and
// the fraction of a window that has passed only grow with elapsed time, so
// reading less elapsed time never admits more. A now before t' is taken as
// t' (no refill, the window's full previous weight). QED. Each step is then a
// step of the unwrapped limiter run with some refill withheld, so the bounds
// under Precision hold on every schedule (TestBucketBound and
// TestWindowLogBound include idle gaps of whole wraps).
//
// What it costs: if a word sits idle for longer than Wrap() - Slack(), t'
// can be later than t by a multiple of the wrap; the limiter then acts as
// if it had last been used at t': a bucket written at its last use with
// fewer than its burst of tokens refills late, a window still counts units
// it would have forgotten. The first admission after that rewrites the time.
// The chance that a word idle for a random long time is read inside such a
// span is below (Slack + a full refill or two windows) / Wrap, at most
// 2^-12 + 2^-14 (TestWrapDips measures 1.5e-4 for a bucket and a window).
//
// # Precision
//
// A bucket banks refill time in the same units: its 24-bit field holds the
// deficit below a full bucket, so the zero word is a full bucket whatever
// the time. A token costs period/events ns, at least 256 units, so tokens have
// at least 8 fractional bits; costs are rounded up to whole units and the
// capacity to the cost of a full burst. Over any interval [a, b] a bucket
// admits at most burst + (b - a + 2u)/T tokens (T = period/events, u the
// unit), the exact token-bucket bound within two units. Measured
// (TestBucketBound, 60 random buckets, 600 requests each): on schedules
// without wrap-length idle gaps a bucket admitted at least as many tokens as
// an exact rational bucket did from the same requests; with idle gaps aimed
// at whole wraps, where the dips above fall, at least 0.946 of them.
//
// A window measures its length in units too, rounding it up to a whole
// number of units (at most 1 part in 4096 longer), and counts with 18 bits.
// On times rounded down to whole units it is exactly package window's
// counter: the same estimate, the same exact integer test, the same error
// bound against a sliding log, which in nanoseconds holds for every interval
// of the rounded window plus one unit.
package packed64
