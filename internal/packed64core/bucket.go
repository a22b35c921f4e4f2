package packed64core

import (
	"math/bits"
	"sync/atomic"
	"time"

	"golang.org/x/sys/cpu"

	"github.com/cellrate/cellrate/internal/backoff"
	"github.com/cellrate/cellrate/internal/packword"
	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/nanotime"
)

// BucketWord is a token bucket in 64 bits:
//
//	bits 63..24  time     40 bits  the unit count when the word was written, modulo 2^40
//	bits 23..0   deficit  24 bits  refill time, in units, missing from a full bucket
//
// A unit is 2^s ns (BucketParams.Unit), counted from the parameters' origin.
// Tokens at the written time are burst - deficit/c, with c = ceil(T/u)
// units per token and T = period/events ns. The zero word is a full bucket
// at any time.
type BucketWord uint64

// The layout of a BucketWord, kept in internal/packword for keyed, which
// reads a word's fields.
const (
	bucketTimeBits    = packword.BucketTimeBits
	bucketDeficitBits = packword.BucketDeficitBits
)

type bucketFields = packword.BucketFields

func packBucket(f bucketFields) BucketWord { return BucketWord(packword.PackBucket(f)) }

func unpackBucket(w BucketWord) bucketFields { return packword.UnpackBucket(uint64(w)) }

// BucketState is what a bucket's steps read and return: its word and a
// reference time for reading the word's wrapped time, at or after the time
// of the step that wrote it (see the package doc). A word never written
// (the zero word) may take any Ref, so the zero BucketState is a full
// bucket. Keep the whole BucketState, 16 bytes, and the steps keep Ref
// right; or keep only the 8-byte Word and one HighWater for many words, as
// Buckets does, and build the state from both.
type BucketState struct {
	Word BucketWord
	Ref  int64
}

const deficitMask = 1<<bucketDeficitBits - 1

// MaxBurst is the largest burst a BucketWord holds with at least 8
// fractional bits per token in its 24-bit field.
const MaxBurst = 1<<15 - 1

// MaxBurst leaves 9 bits of the deficit field: 8 fractional bits a token.
var _ [0]struct{} = [MaxBurst - (1<<(bucketDeficitBits-9) - 1)]struct{}{}

// minTokenNs is the least refill time of a token in ns: with a unit of 1ns
// it gives 8 fractional bits.
const minTokenNs = 256

// BucketParams is a validated token bucket: events tokens per period, up to
// burst at once. The zero BucketParams admits nothing.
type BucketParams struct {
	clk   clock
	rate  uint64 // tokens per period
	per   uint64 // the period in ns
	div   uint64 // rate << shift: units per token are per/div
	burst uint64
	cap   uint64 // units a full bucket holds: burst*cost1, the cost of burst tokens
	cost1 uint64 // the cost of one token in units: ceil(per/div)
}

// NewBucketParams validates a bucket refilled with events tokens per
// period, holding up to burst. A parameter out of range is a
// *limit.ParamError: period must be at least 256ns, events in
// [1, period/256ns] (a token must take at least 256ns to refill) and burst
// in [1, MaxBurst].
func NewBucketParams(events int64, period time.Duration, burst int64) (BucketParams, error) {
	const why = "a token must take at least 256ns to refill"
	switch {
	case events < 1:
		return BucketParams{}, &limit.ParamError{Pkg: "packed64", Param: "events", Value: events, Min: int64(1), Max: max(1, int64(period)/minTokenNs)}
	case period < minTokenNs:
		e := &limit.ParamError{Pkg: "packed64", Param: "period", Value: period, Min: time.Duration(minTokenNs), Reason: why}
		if events <= int64(time.Duration(1<<63-1)/minTokenNs) {
			e.Min = time.Duration(events * minTokenNs)
		}
		return BucketParams{}, e
	case events > int64(period)/minTokenNs:
		return BucketParams{}, &limit.ParamError{Pkg: "packed64", Param: "events", Value: events, Min: int64(1), Max: int64(period) / minTokenNs, Reason: why}
	case burst < 1 || burst > MaxBurst:
		return BucketParams{}, &limit.ParamError{Pkg: "packed64", Param: "burst", Value: burst, Min: int64(1), Max: int64(MaxBurst)}
	}
	p := BucketParams{rate: uint64(events), per: uint64(period), burst: uint64(burst)}
	// The finest unit whose full bucket, burst tokens of a whole number of
	// units each, fits the deficit field. A token costs its refill time
	// rounded up to whole units and every token costs the same, so burst
	// single tokens fit a full bucket at once, and Remaining, the whole
	// tokens in the bucket, is exactly what fits whether taken one at a time
	// or together. The rate and burst bounds keep a token at >= 256 units
	// (in the unit half this one, a token cost >= 2^24/burst > 2^9 units)
	// and rate<<shift in 64 bits.
	for shift := uint8(0); ; shift++ {
		p.div = p.rate << shift
		c1 := (p.per + p.div - 1) / p.div // per + div cannot wrap: div <= per/256
		if hi, lo := bits.Mul64(p.burst, c1); hi == 0 && lo < 1<<bucketDeficitBits {
			p.clk, p.cap, p.cost1 = newClock(shift, bucketTimeBits), lo, c1
			break
		}
	}
	return p, nil
}

// Unit returns the time unit of the word's fields.
func (p BucketParams) Unit() time.Duration { return time.Duration(1) << p.clk.shift }

// Wrap returns how long the time field takes to wrap: 2^40 units.
func (p BucketParams) Wrap() time.Duration { return p.clk.wrap() }

// Slack returns the HighWater slack for these parameters, in ns.
func (p BucketParams) Slack() int64 { return p.clk.slack }

// Burst returns the most tokens the bucket holds.
func (p BucketParams) Burst() int64 { return int64(p.burst) }

// Rate returns the refill rate: Events tokens per Period.
func (p BucketParams) Rate() (events int64, period time.Duration) {
	return int64(p.rate), time.Duration(p.per)
}

// Step decides whether n tokens may be taken at time now from the bucket
// in s. It returns the state to keep if admitted (s itself, which need not
// be written, otherwise) and the Result, or limit.ErrNegativeCost or
// limit.ErrCostExceedsBurst with s and a Result whose RetryAfter is
// limit.Never. n = 0 is always admitted, with s unchanged and Remaining as
// of now. The state returned has a Ref at or after its word's write: now,
// or s.Ref if that is later.
func (p BucketParams) Step(s BucketState, now, n int64) (BucketState, limit.Result, error) {
	return p.step(s, now, n)
}

func (p *BucketParams) step(s BucketState, now, n int64) (BucketState, limit.Result, error) {
	if n < 0 {
		return s, limit.Result{RetryAfter: limit.Never}, limit.ErrNegativeCost
	}
	if uint64(n) > p.burst {
		return s, limit.Result{RetryAfter: limit.Never}, limit.ErrCostExceedsBurst
	}
	if p.burst == 0 {
		return s, limit.Result{OK: true}, nil // the zero BucketParams, n == 0
	}
	u, refU := p.clk.units(now), p.clk.units(s.Ref)
	if n == 0 {
		_, _, dn := p.refill(s.Word, u, refU)
		return s, limit.Result{OK: true, Remaining: p.tokens(dn)}, nil
	}
	c := uint64(n) * p.cost1 // n <= burst: at most cap, below 2^24
	t, d, dn := p.refill(s.Word, u, refU)
	next, ok := p.take(t, d, dn, c)
	if !ok {
		// At unit t+d+c-cap the deficit is cap-c; dn+c > cap puts it after now.
		return s, limit.Result{Remaining: p.tokens(dn), RetryAfter: time.Duration(p.clk.after(t, int64(d)+int64(c)-int64(p.cap), now))}, nil
	}
	return BucketState{next, nextRef(s.Ref, s.Word&deficitMask == 0, now)}, limit.Result{OK: true, Remaining: p.tokens(dn + c)}, nil
}

// nextRef returns the Ref of a state written at now over a state with Ref
// ref: now, or ref if that is later (a stale now keeps the word's time). A
// word whose time does not matter (fresh: a full bucket, an empty window)
// may have come with any Ref, so its next Ref is now.
func nextRef(ref int64, fresh bool, now int64) int64 {
	if fresh {
		return now
	}
	return max(ref, now)
}

// take is the admission: c units from a bucket whose refill (see refill)
// at the decision's unit gave t, d and dn. It returns the word to store and
// whether the c units fit. Step and the cells' AllowAt both decide here;
// it is small enough to inline into their loops.
func (p *BucketParams) take(t int64, d, dn, c uint64) (BucketWord, bool) {
	if dn+c > p.cap {
		return 0, false
	}
	return p.word(t, d+c), true
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
	t = p.clk.unwrap(uint64(w)>>bucketDeficitBits, refU)
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
	return BucketWord(uint64(t)<<bucketDeficitBits | d)
}

// tokens returns the whole tokens in a bucket with deficit d: the most
// that fit, (cap-d)/cost1, taken together or one at a time. A word from
// elsewhere may hold a deficit above the capacity: it is an empty bucket,
// which the decisions keep in debt.
func (p *BucketParams) tokens(d uint64) int64 {
	if d >= p.cap {
		return 0
	}
	return int64((p.cap - d) / p.cost1)
}

// TokensAt returns the tokens the bucket in s holds at now, with their
// fraction, for reading; decisions never use floating point.
func (p BucketParams) TokensAt(s BucketState, now int64) float64 {
	if p.per == 0 {
		return 0
	}
	_, _, dn := p.refill(s.Word, p.clk.units(now), p.clk.units(s.Ref))
	if dn >= p.cap {
		return 0
	}
	return float64(p.cap-dn) / float64(p.cost1)
}

// RemainingAt returns the whole tokens the bucket in s holds at now: what
// Step would take at most.
func (p BucketParams) RemainingAt(s BucketState, now int64) int64 {
	if p.per == 0 {
		return 0
	}
	_, _, dn := p.refill(s.Word, p.clk.units(now), p.clk.units(s.Ref))
	return p.tokens(dn)
}

// Undo gives back an admission at now at that moved the word from before
// to after. If s's word is still after (nothing admitted since, or
// everything admitted since given back) it returns s with the word before
// and true: the bucket is as if that admission had never happened. Otherwise
// it returns s and false: a later admission was decided with the tokens
// taken, and the word cannot say how much of them the bucket would have
// refilled anyway while full, so giving them back could pass the bound. It
// also refuses once s.Ref is half a wrap past at, where another admission a
// whole number of wraps later could have left the same bits; and an
// admission that left the bits as they were (a whole number of wraps after
// the last write) gives back nothing.
func (p BucketParams) Undo(s BucketState, at int64, before, after BucketWord) (BucketState, bool) {
	if s.Word != after || !undoable(s.Ref, at, p.clk.wrap()) {
		return s, false
	}
	return BucketState{before, s.Ref}, true
}

// Bucket is a token bucket in one atomic 64-bit word, safe for concurrent
// use. Its parameters and HighWater sit beside the word; Buckets shares
// them among many words.
//
// The zero Bucket admits nothing; use NewBucket. A Bucket must not be
// copied after first use.
type Bucket struct {
	clock nanotime.Clock
	c     bucketCell
}

// bucketCell is a Bucket without its clock: no pointers, so that a test
// can run its denials on a read-only copy.
type bucketCell struct {
	hw   HighWater
	p    BucketParams
	_    cpu.CacheLinePad // word's line holds nothing the reads of p and hw would miss on
	word atomic.Uint64
	_    cpu.CacheLinePad
}

func (c *bucketCell) AllowAt(now int64) bool { return c.p.allow(&c.word, &c.hw, now) }

func (c *bucketCell) AllowNAt(now, n int64) (limit.Result, error) {
	return c.p.allowN(&c.word, &c.hw, now, n)
}

var _ limit.Member = (*Bucket)(nil)

// NewBucket returns a full Bucket refilled with events tokens per period,
// holding up to burst. A parameter out of range is a *limit.ParamError (see
// NewBucketParams).
func NewBucket(events int64, period time.Duration, burst int64, opts ...Option) (*Bucket, error) {
	b := new(Bucket)
	if err := b.Init(events, period, burst, opts...); err != nil {
		return nil, err
	}
	return b, nil
}

// Init makes b what NewBucket returns, in place; b must not be in use.
func (b *Bucket) Init(events int64, period time.Duration, burst int64, opts ...Option) error {
	p, err := NewBucketParams(events, period, burst)
	if err != nil {
		return err
	}
	c, err := newConfig(opts)
	if err != nil {
		return err
	}
	b.clock, b.c.p = c.clock, p
	return nil
}

// Params returns the bucket's parameters.
func (b *Bucket) Params() BucketParams { return b.c.p }

// now reads the bucket's clock (nanotime.Now for the zero Bucket).
func (b *Bucket) now() int64 { return readClock(b.clock) }

// Allow is AllowAt with the bucket's clock.
func (b *Bucket) Allow() bool { return b.AllowAt(b.now()) }

// AllowAt reports whether a token may be taken at time now, and takes it if so.
func (b *Bucket) AllowAt(now int64) bool { return b.c.AllowAt(now) }

// AllowN is AllowNAt with the bucket's clock.
func (b *Bucket) AllowN(n int64) (limit.Result, error) { return b.AllowNAt(b.now(), n) }

// AllowNAt takes n tokens at time now if all n are available.
func (b *Bucket) AllowNAt(now, n int64) (limit.Result, error) { return b.c.AllowNAt(now, n) }

// TakeAt is AllowNAt that also returns, when it admits n > 0, the Receipt
// Refund needs to give the tokens back (limit.Member).
func (b *Bucket) TakeAt(now, n int64) (limit.Result, limit.Receipt, error) {
	return b.c.p.run(&b.c.word, &b.c.hw, now, n)
}

// Refund gives back the tokens of the admission that returned rc (see
// limit.Member and BucketParams.Undo): exactly when the word is still the
// one that admission stored, when no other token was taken since or all
// taken since were given back; otherwise nothing. limit.All refunds at
// once, so that is rare; put a Bucket that many callers share last in an
// All, where it is never refunded.
//
// The word's reference time goes back with it while it is still the one
// that admission left, so a refunded admission far ahead of the clock
// leaves no trace; for the instant a Refund takes, a decision on the Bucket
// is denied (RetryAfter 1ns) and a read waits.
func (b *Bucket) Refund(rc limit.Receipt) {
	if rc.N == 0 {
		return
	}
	p := &b.c.p
	refundCell(&b.c.word, &b.c.hw, rc, p.clk.slack, func(w uint64, ref int64) bool {
		_, ok := p.Undo(BucketState{BucketWord(w), ref}, rc.At, BucketWord(rc.Before[0]), BucketWord(rc.After[0]))
		return ok
	})
}

// Tokens is TokensAt with the bucket's clock.
func (b *Bucket) Tokens() float64 { return b.TokensAt(b.now()) }

// TokensAt returns the tokens available at now, with their fraction.
func (b *Bucket) TokensAt(now int64) float64 {
	return b.c.p.TokensAt(b.c.p.state(&b.c.word, &b.c.hw), now)
}

// Remaining is RemainingAt with the bucket's clock.
func (b *Bucket) Remaining() int64 { return b.RemainingAt(b.now()) }

// RemainingAt returns the whole tokens available at now.
func (b *Bucket) RemainingAt(now int64) int64 {
	return b.c.p.RemainingAt(b.c.p.state(&b.c.word, &b.c.hw), now)
}

// state loads a cell's word, then its reference (see HighWater).
func (p *BucketParams) state(word *atomic.Uint64, hw *HighWater) BucketState {
	w, ref := hw.read(word, p.clk.slack)
	return BucketState{BucketWord(w), ref}
}

// allow takes one token from word, with the reference time kept in hw.
// The high-water mark is loaded after the word, and raised before the
// word is written (see HighWater).
//
// allow and allowN are the package's only writing decisions and its hot
// paths: their load/step/CAS loops are written out around the same take and
// step that Step runs, because cell.Run64 with a closure cost 1.2-1.7x
// their CPU time in a one-run benchmark.
func (p *BucketParams) allow(word *atomic.Uint64, hw *HighWater, now int64) bool {
	if p.burst == 0 {
		return false
	}
	u := p.clk.units(now)
	var spin backoff.Spin
	for ; ; spin.Wait() {
		old := word.Load()
		ref, free := hw.load(p.clk.slack)
		if !free {
			return false // a Refund is putting the word back
		}
		t, d, dn := p.refill(BucketWord(old), u, p.clk.units(ref))
		next, ok := p.take(t, d, dn, p.cost1)
		if !ok {
			return false
		}
		if now > ref && !hw.raise(now, p.clk.slack) {
			return false
		}
		if word.CompareAndSwap(old, uint64(next)) {
			return true
		}
	}
}

// allowN runs step on word.
func (p *BucketParams) allowN(word *atomic.Uint64, hw *HighWater, now, n int64) (limit.Result, error) {
	r, _, err := p.run(word, hw, now, n)
	return r, err
}

// run runs step on word and returns, with its result, the Receipt of what
// it wrote: the words and the raw marks just before and just after (the
// zero Receipt when it wrote nothing). The raise comes after the step and
// before the CAS that publishes the word; a raise whose CAS then fails is
// harmless, as a higher mark never lets a word admit more (see HighWater).
// While a Refund holds the mark it decides nothing (busy).
func (p *BucketParams) run(word *atomic.Uint64, hw *HighWater, now, n int64) (limit.Result, limit.Receipt, error) {
	var spin backoff.Spin
	for ; ; spin.Wait() {
		old := word.Load()
		mark := hw.t.Load()
		if mark == locked {
			r, err := p.busy(n)
			return r, limit.Receipt{}, err
		}
		ref := addSat(mark^bias, p.clk.slack)
		next, r, err := p.step(BucketState{BucketWord(old), ref}, now, n)
		if !writes(r, err, n, uint64(next.Word) == old, now, ref) {
			return r, limit.Receipt{}, err
		}
		if now > ref && !hw.raise(now, p.clk.slack) {
			r, err := p.busy(n)
			return r, limit.Receipt{}, err
		}
		if word.CompareAndSwap(old, uint64(next.Word)) {
			after := uint64(hw.t.Load())
			return r, limit.Receipt{At: now, N: n, Before: [2]uint64{old, uint64(mark)}, After: [2]uint64{uint64(next.Word), after}}, nil
		}
	}
}

// busy is the decision while a Refund holds the mark: the errors of an n
// no decision admits, n == 0 admitted, and otherwise a denial for the
// instant the Refund lasts.
func (p *BucketParams) busy(n int64) (limit.Result, error) {
	switch {
	case n < 0:
		return limit.Result{RetryAfter: limit.Never}, limit.ErrNegativeCost
	case uint64(n) > p.burst:
		return limit.Result{RetryAfter: limit.Never}, limit.ErrCostExceedsBurst
	case n == 0:
		return limit.Result{OK: true}, nil
	}
	return limit.Result{RetryAfter: 1}, nil
}

// writes reports whether a cell must store a step's word: an admission of
// n > 0 always restamps the word at now, so even when its bits come out
// the same (a whole number of wraps on) the mark must rise to cover now and
// a CAS confirm the word after it, unless ref already covers now.
func writes(r limit.Result, err error, n int64, same bool, now, ref int64) bool {
	return r.OK && err == nil && n != 0 && !(same && now <= ref)
}
