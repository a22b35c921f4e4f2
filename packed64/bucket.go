package packed64

import (
	"fmt"
	"math/bits"
	"sync/atomic"
	"time"

	"golang.org/x/sys/cpu"

	"github.com/cellrate/cellrate/internal/backoff"
	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/nanotime"
)

// BucketWord is a token bucket in 64 bits:
//
//	bits 63..24  time     40 bits  the unit count when the word was written, modulo 2^40
//	bits 23..0   deficit  24 bits  refill time, in units, missing from a full bucket
//
// A unit is 2^s ns (BucketParams.Unit), counted from the parameters' origin.
// Tokens at the written time are burst - deficit*u/T, with T = period/events
// ns per token. The zero word is a full bucket at any time.
type BucketWord uint64

// Field widths of a BucketWord.
const (
	BucketTimeBits    = 40
	BucketDeficitBits = 24
)

// BucketState is a BucketWord's fields. Time is below 2^40 and Deficit
// below 2^24.
type BucketState struct {
	Time    uint64
	Deficit uint64
}

// PackBucket returns the word holding s; bits beyond the field widths are
// dropped.
func PackBucket(s BucketState) BucketWord {
	return BucketWord(s.Time<<BucketDeficitBits | s.Deficit&deficitMask)
}

// UnpackBucket returns the fields of w.
func UnpackBucket(w BucketWord) BucketState {
	return BucketState{Time: uint64(w) >> BucketDeficitBits, Deficit: uint64(w) & deficitMask}
}

const deficitMask = 1<<BucketDeficitBits - 1

// MaxBurst is the largest burst a BucketWord holds with at least 8
// fractional bits per token in its 24-bit field.
const MaxBurst = 1<<(BucketDeficitBits-9) - 1

// minTokenNs is the least refill time of a token in ns: with a unit of 1ns
// it gives 8 fractional bits.
const minTokenNs = 256

// BucketParams is a validated token bucket: events tokens per period, up to
// burst at once, with time counted from origin. The zero BucketParams admits
// nothing.
type BucketParams struct {
	clk   clock
	rate  uint64 // tokens per period
	per   uint64 // the period in ns
	div   uint64 // rate << shift: units per token are per/div
	burst uint64
	cap   uint64 // units a full bucket holds: the cost of burst tokens
	cost1 uint64 // the cost of one token, in units
}

// NewBucketParams validates a bucket refilled with events tokens per
// period, holding up to burst, with time units counted from origin (any
// fixed time; 0 for nanotime). burst must be in [1, MaxBurst] and a token
// must take at least 256ns to refill (events <= period/256ns).
func NewBucketParams(events int64, period time.Duration, burst int64, origin int64) (BucketParams, error) {
	if period < 1 {
		return BucketParams{}, fmt.Errorf("packed64: period must be >= 1ns, got %v", period)
	}
	if most := int64(period) / minTokenNs; events < 1 || events > most {
		return BucketParams{}, fmt.Errorf("packed64: events must be in [1, %d] per period %v (a token must take >= %dns to refill), got %d",
			most, period, minTokenNs, events)
	}
	if burst < 1 || burst > MaxBurst {
		return BucketParams{}, fmt.Errorf("packed64: burst must be in [1, %d], got %d", MaxBurst, burst)
	}
	p := BucketParams{rate: uint64(events), per: uint64(period), burst: uint64(burst)}
	// The finest unit whose full bucket fits the deficit field. The rate
	// and burst bounds keep a token at >= 256 units and rate<<shift in 64 bits.
	hi, _ := bits.Mul64(p.burst, p.per)
	for shift := uint8(0); ; shift++ {
		p.div = p.rate << shift
		if hi >= p.div {
			continue // the quotient needs more than 64 bits
		}
		if c := p.costOf(p.burst); c < 1<<BucketDeficitBits {
			p.clk, p.cap = newClock(origin, shift, BucketTimeBits), c
			break
		}
	}
	p.cost1 = p.costOf(1)
	return p, nil
}

// costOf returns ceil(n*period/div), the units n tokens cost; n <= burst.
func (p *BucketParams) costOf(n uint64) uint64 {
	hi, lo := bits.Mul64(n, p.per)
	q, r := bits.Div64(hi, lo, p.div) // hi < div while the quotient fits 64 bits
	if r != 0 {
		q++
	}
	return q
}

// Unit returns the time unit of the word's fields.
func (p BucketParams) Unit() time.Duration { return time.Duration(1) << p.clk.shift }

// Wrap returns how long the time field takes to wrap: 2^40 units.
func (p BucketParams) Wrap() time.Duration { return p.clk.wrap() }

// Slack returns the HighWater slack for these parameters, in ns.
func (p BucketParams) Slack() int64 { return p.clk.slack }

// Burst returns the most tokens the bucket holds.
func (p BucketParams) Burst() int64 { return int64(p.burst) }

// Step decides whether n tokens may be taken at time now from the bucket
// in w, ref being at or after the time of the step that wrote w (see the
// package doc; a word never written may take any ref). It returns the word
// to store if admitted (w itself, which need not be written, otherwise) and
// the Result, or limit.ErrNegativeCost or limit.ErrCostExceedsBurst with w
// and a Result whose RetryAfter is limit.Never. n = 0 is always admitted,
// with w unchanged and Remaining as of now.
func (p *BucketParams) Step(w BucketWord, now, ref, n int64) (BucketWord, limit.Result, error) {
	if n < 0 {
		return w, limit.Result{RetryAfter: limit.Never}, limit.ErrNegativeCost
	}
	if uint64(n) > p.burst {
		return w, limit.Result{RetryAfter: limit.Never}, limit.ErrCostExceedsBurst
	}
	if n == 0 {
		if p.burst == 0 {
			return w, limit.Result{OK: true}, nil // the zero BucketParams
		}
		_, _, dn := p.refill(w, p.clk.units(now), p.clk.units(ref))
		return w, limit.Result{OK: true, Remaining: p.tokens(dn)}, nil
	}
	t, d, dn := p.refill(w, p.clk.units(now), p.clk.units(ref))
	c := p.costOf(uint64(n))
	if dn+c > p.cap {
		// At unit t+d+c-cap the deficit is cap-c; dn+c > cap puts it after now.
		return w, limit.Result{Remaining: p.tokens(dn), RetryAfter: p.clk.after(t, int64(d)+int64(c)-int64(p.cap), now)}, nil
	}
	return p.word(t, d+c), limit.Result{OK: true, Remaining: p.tokens(dn + c)}, nil
}

// refill returns the state to build on at unit u, its time t and deficit
// d, and dn, the deficit at u that decides. The written time is unwrapped
// against refU. A u at or after it moves t to u and refills d by the time
// elapsed (dn = d). A stale u, before it, keeps t (never moving the time
// back, so no refill is credited twice) and sees dn = d plus the refill
// between u and t, which the bucket did not have at u (counting at most a
// capacity of it, which already leaves the bucket empty): so a stale now is
// a GCRA's now, and the bound holds over the times callers pass.
func (p *BucketParams) refill(w BucketWord, u, refU int64) (t int64, d, dn uint64) {
	d = uint64(w) & deficitMask
	if d == 0 {
		return u, 0, 0 // full at any time: a word never written
	}
	t = p.clk.unwrap(uint64(w)>>BucketDeficitBits, refU)
	if u < t {
		return t, d, d + min(uint64(t-u), p.cap)
	}
	if e := uint64(u - t); e < d {
		return u, d - e, d - e
	}
	return u, 0, 0
}

// word packs a unit time and a deficit below 2^24; the shift drops the
// time's bits above the field.
func (p *BucketParams) word(t int64, d uint64) BucketWord {
	return BucketWord(uint64(t)<<BucketDeficitBits | d)
}

// tokens returns the whole tokens in a bucket with deficit d.
// A word from elsewhere may hold a deficit above the capacity: it is an
// empty bucket, which the decisions keep in debt.
func (p *BucketParams) tokens(d uint64) int64 {
	if d >= p.cap {
		return 0
	}
	hi, lo := bits.Mul64(p.cap-d, p.div)
	q, _ := bits.Div64(hi, lo, p.per) // below burst+1
	return int64(q)
}

// TokensAt returns the tokens the bucket in w holds at now, with their
// fraction, for reading; decisions never use floating point.
func (p BucketParams) TokensAt(w BucketWord, now, ref int64) float64 {
	if p.per == 0 {
		return 0
	}
	_, _, dn := p.refill(w, p.clk.units(now), p.clk.units(ref))
	if dn >= p.cap {
		return 0
	}
	return float64(p.cap-dn) * float64(p.div) / float64(p.per)
}

// Bucket is a token bucket in one atomic 64-bit word, safe for concurrent
// use. Its parameters and HighWater sit beside the word; Buckets shares
// them among many words.
//
// The zero Bucket admits nothing; use NewBucket. A Bucket must not be
// copied after first use.
type Bucket struct {
	hw   HighWater
	p    BucketParams
	_    cpu.CacheLinePad // word's line holds nothing the reads of p and hw would miss on
	word atomic.Uint64
	_    cpu.CacheLinePad
}

var _ limit.Limiter = (*Bucket)(nil)

// NewBucket returns a full Bucket refilled with events tokens per period,
// holding up to burst, counting time from 0 (nanotime's clock). See
// NewBucketParams for the bounds.
func NewBucket(events int64, period time.Duration, burst int64) (*Bucket, error) {
	p, err := NewBucketParams(events, period, burst, 0)
	if err != nil {
		return nil, err
	}
	return &Bucket{p: p}, nil
}

// Params returns the bucket's parameters.
func (b *Bucket) Params() BucketParams { return b.p }

// Allow is AllowAt(nanotime.Now()).
func (b *Bucket) Allow() bool { return b.AllowAt(nanotime.Now()) }

// AllowAt reports whether a token may be taken at time now, and takes it if so.
func (b *Bucket) AllowAt(now int64) bool { return b.p.allow(&b.word, &b.hw, now) }

// AllowN is AllowNAt(nanotime.Now(), n).
func (b *Bucket) AllowN(n int64) (limit.Result, error) { return b.AllowNAt(nanotime.Now(), n) }

// AllowNAt takes n tokens at time now if all n are available.
func (b *Bucket) AllowNAt(now, n int64) (limit.Result, error) {
	return b.p.allowN(&b.word, &b.hw, now, n)
}

// Tokens is TokensAt(nanotime.Now()).
func (b *Bucket) Tokens() float64 { return b.TokensAt(nanotime.Now()) }

// TokensAt returns the tokens available at now, with their fraction.
func (b *Bucket) TokensAt(now int64) float64 {
	w := BucketWord(b.word.Load())
	return b.p.TokensAt(w, now, b.hw.Ref(b.p.clk.slack))
}

// allow takes one token from word, with the reference time kept in hw.
// The high-water mark is loaded after the word, and raised before the
// word is written (see HighWater).
func (p *BucketParams) allow(word *atomic.Uint64, hw *HighWater, now int64) bool {
	if p.burst == 0 {
		return false
	}
	u := p.clk.units(now)
	var spin backoff.Spin
	for ; ; spin.Wait() {
		old := word.Load()
		ref := hw.Ref(p.clk.slack)
		t, d, dn := p.refill(BucketWord(old), u, p.clk.units(ref))
		if dn+p.cost1 > p.cap {
			return false
		}
		d += p.cost1
		if now > ref {
			hw.Raise(now, p.clk.slack)
		}
		if word.CompareAndSwap(old, uint64(p.word(t, d))) {
			return true
		}
	}
}

func (p *BucketParams) allowN(word *atomic.Uint64, hw *HighWater, now, n int64) (limit.Result, error) {
	var spin backoff.Spin
	for ; ; spin.Wait() {
		old := word.Load()
		ref := hw.Ref(p.clk.slack)
		next, r, err := p.Step(BucketWord(old), now, ref, n)
		// An admission that leaves the same bits (a whole number of wraps
		// on) still restamps the word at now: unless ref already covers
		// now, the mark must rise and the CAS confirm the word after it.
		if !r.OK || err != nil || n == 0 || uint64(next) == old && now <= ref {
			return r, err
		}
		hw.Raise(now, p.clk.slack)
		if word.CompareAndSwap(old, uint64(next)) {
			return r, nil
		}
	}
}
