package step

import (
	"time"

	"github.com/cellrate/cellrate/internal/bucketcore"
	"github.com/cellrate/cellrate/limit"
)

// Bucket is the rate and burst of package bucket's exact token bucket, for
// its steps on a 128-bit state.
type Bucket struct{ p bucketcore.Params }

// BucketState is a Bucket's whole state: T is the time of the last refill
// as uint64(now) ^ 1<<63 (so the unsigned order is int64 time's order) and
// Deficit is how many units (Unit per token) the bucket lacks of full at T.
// The zero BucketState is a full bucket.
type BucketState struct {
	T       uint64
	Deficit uint64
}

// NewBucket returns the Bucket refilled with events tokens per period and
// holding up to burst, with bucket.New's limits and errors.
func NewBucket(events int64, period time.Duration, burst int64) (Bucket, error) {
	p, err := bucketcore.NewParams(events, period, burst)
	return Bucket{p}, restamp(err)
}

// Step decides a request of n tokens at now on state s: the state to store
// and the Result. n < 0 returns limit.ErrNegativeCost and n > burst
// limit.ErrCostExceedsBurst, each with a Result that is not OK and
// RetryAfter limit.Never; n == 0 is admitted and changes nothing.
func (b Bucket) Step(s BucketState, now, n int64) (BucketState, limit.Result, error) {
	next, r, err := b.p.Step(bucketcore.State(s), now, n)
	return BucketState(next), r, err
}

// TakeUpTo takes as many whole tokens as s holds at now, at most k, and
// returns the state to store and how many it took: a batch borrowed for a
// local cache, counted as admitted at now. It takes nothing, and returns s,
// when k <= 0 or not a whole token is there.
func (b Bucket) TakeUpTo(s BucketState, now, k int64) (BucketState, int64) {
	next, n := b.p.TakeUpTo(bucketcore.State(s), now, k)
	return BucketState(next), n
}

// Unit returns the units in one token: with the rate in lowest terms as e
// tokens per p ns, p. The bucket refills e units per nanosecond.
func (b Bucket) Unit() int64 { return b.p.Unit() }
