package packed64

import (
	"time"

	"github.com/cellrate/cellrate/internal/packed64core"
	"github.com/cellrate/cellrate/limit"
)

// Bucket is a token bucket in one atomic 64-bit word, safe for concurrent
// use.
//
// The zero Bucket admits nothing; use NewBucket. A Bucket must not be
// copied after first use (go vet reports copies).
type Bucket struct {
	_ noCopy
	b packed64core.Bucket
}

// noCopy makes go vet's copylocks check report copies under the user's
// type, not the internal one it wraps.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}

var _ limit.Member = (*Bucket)(nil)

// NewBucket returns a full Bucket refilled with events tokens per period,
// holding up to burst. A parameter out of range is a *limit.ParamError:
// events, period and burst must be at least 1, burst at most 32767, and a
// token's refill time period/events at least 256 ns.
func NewBucket(events int64, period time.Duration, burst int64, opts ...Option) (*Bucket, error) {
	o, err := core(opts)
	if err != nil {
		return nil, err
	}
	b := new(Bucket)
	if err := b.b.Init(events, period, burst, o...); err != nil {
		return nil, err
	}
	return b, nil
}

// Allow is AllowAt with the bucket's clock.
func (b *Bucket) Allow() bool { return b.b.Allow() }

// AllowAt reports whether a token may be taken at time now, and takes it if
// so.
func (b *Bucket) AllowAt(now int64) bool { return b.b.AllowAt(now) }

// AllowN is AllowNAt with the bucket's clock.
func (b *Bucket) AllowN(n int64) (limit.Result, error) { return b.b.AllowN(n) }

// AllowNAt takes n tokens at time now if all n are available. n < 0
// returns limit.ErrNegativeCost and n > burst limit.ErrCostExceedsBurst;
// n == 0 takes nothing and reports what remains.
func (b *Bucket) AllowNAt(now, n int64) (limit.Result, error) { return b.b.AllowNAt(now, n) }

// TakeAt is AllowNAt that also returns, when it admits n > 0, the Receipt
// Refund needs to give the tokens back (limit.Member).
func (b *Bucket) TakeAt(now, n int64) (limit.Result, limit.Receipt, error) {
	return b.b.TakeAt(now, n)
}

// Refund gives back the tokens of the admission that returned rc (see
// limit.Member): exactly when the word is still the one that admission
// stored, when no other token was taken since or all taken since were given
// back; otherwise nothing. limit.All refunds at once, so that is rare; put a
// Bucket that many callers share last in an All, where it is never
// refunded. For the instant a Refund takes, a decision on the Bucket is
// denied (RetryAfter 1ns).
func (b *Bucket) Refund(rc limit.Receipt) { b.b.Refund(rc) }
