// Package adaptive moves limits with the health of what they protect.
// Use an AIMD (NewAIMD) when the right rate is not a constant: it moves a
// limiter's rate up after good intervals and down after bad ones (see
// ExampleAIMD). Use a Throttle (New) when a client should shed load itself
// before an overloaded backend fails (see ExampleThrottle). To cap
// requests in flight rather than a rate, see package concurrency.
//
// AIMD is a rate controller: it drives a limiter whose rate can change in
// use (a gcra.Limiter, a bucket.Limiter, a rate.Limiter, anything with a
// Setter) from the outcomes or latencies callers record, raising the rate
// by a step after good intervals and cutting it by a factor after bad
// ones, as TCP does: for a downstream healthy at 1000 requests per second
// today and degraded at 500 tomorrow. AIMD oscillates by nature (rise,
// fail, cut, rise); hysteresis (act only after several intervals alike)
// and smoothing (judge a moving average) damp it.
//
// Throttle is a client-side adaptive throttle (Google SRE book, "Handling
// Overload"): a client rejects requests itself, before sending them, in
// proportion to how much more it asks of a backend than the backend
// accepts, so an overloaded backend sheds load without spending work on
// the rejections.
//
// # AIMD's contract
//
// Time is cut into intervals (WithInterval). Recording an outcome adds to
// one of two striped counters and loads one word: no lock, no allocation.
// The first record at or after an interval's end judges it, alone (a
// compare-and-swap elects it; concurrent records go on and may count in
// either interval): the interval is bad if its failure fraction (or, with
// WithSmoothing, the moving average of those fractions) exceeds the
// tolerance, good otherwise; an interval with fewer than WithMinSamples
// outcomes is not judged and its outcomes count in the next. After
// WithHysteresis's count of bad intervals in a row the rate is multiplied
// by decrease, after its count of good ones increase is added, always
// within [minRate, maxRate], and the new rate is set on the target at the
// judging record's time. A rate the target refuses is not taken (Err
// returns the target's error). A judgement runs the target's setter, so
// the record that makes it costs what the setter costs.
//
// # Throttle's contract
//
// Over a trailing window, the Throttle counts requests (every call of
// Allow, admitted or not) and accepts (calls of Accepted, one per request
// the backend accepted). Allow rejects with probability
//
//	max(0, (requests - K*accepts) / (requests + 1))
//
// computed from the counts before the call, drawn from the Throttle's
// random source (WithRand). With K = 2 (the book's choice) a backend that
// accepts everything is never throttled, and one that accepts a fraction a
// of what it is sent ends up receiving about K times what it accepts: the
// client sheds the rest locally. A larger K throttles later and less.
//
// # The window
//
// The window is B buckets (WithBuckets, 10 by default) of window/B each;
// counts cover the current bucket and the B-1 before it, so the window
// slides by one bucket at a time. The counts are two striped counters
// (package striped: an Add writes only its P's cache line) read at every
// decision, less the counts at the start of the window's first bucket: the
// first call in each bucket records a snapshot in a ring of B+1. Calls that
// race a bucket boundary may be counted in either bucket; otherwise the
// counts are exact. A decision costs O(GOMAXPROCS + B) loads, takes no
// lock and allocates nothing.
//
// # Time
//
// Times are int64 nanoseconds (package nanotime). AllowAt, AcceptedAt,
// RecordAt and ObserveAt take the time; their plain forms and
// RejectProbability read the clock (WithClock). Buckets are numbered
// floor(now / (window/B)), which is exact over all of int64; a now before
// the latest bucket seen is counted in that bucket.
package adaptive

import (
	"math"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/nanotime"
	"github.com/cellrate/cellrate/striped"
)

// Throttle is a client-side adaptive throttle. It is safe for concurrent
// use. The zero Throttle has no window and fails safe: it rejects every
// request (RejectProbability 1) and counts nothing; make one with New. A
// Throttle must not be copied after first use (go vet reports copies).
type Throttle struct {
	k      float64
	bucket int64 // ns per bucket
	nb     int64 // buckets per window
	clock  nanotime.Clock
	rand   func() uint64

	requests, accepts striped.Counter
	latest            atomic.Int64 // the latest bucket seen
	ring              []snapshot   // nb+1 snapshots, bucket b in ring[b mod (nb+1)], mod floored
}

// snapshot is the counts at the start of a bucket. seq is the bucket,
// written last (math.MinInt64 while none or being written); a reader
// re-checks it after reading the counts.
type snapshot struct {
	seq      atomic.Int64
	req, acc atomic.Int64
}

// Option configures a Throttle (New) or an AIMD (NewAIMD). WithClock
// configures either; the other options belong to one, and the other's
// constructor refuses them with a *limit.ParamError.
type Option func(*config)

type config struct {
	buckets int64
	clock   nanotime.Clock
	rand    func() uint64
	aimdConfig
	kind optionKind // set by the option being applied
}

// optionKind says which constructor an option belongs to.
type optionKind uint8

const (
	forEither optionKind = iota
	forThrottle
	forAIMD
)

// apply applies opts over c, refusing a nil option and one of the other
// constructor's (other).
func (c *config) apply(opts []Option, other optionKind) error {
	for i, o := range opts {
		if o == nil {
			return &limit.ParamError{Pkg: "adaptive", Param: "option", Value: i, Reason: "a nil Option"}
		}
		c.kind = forEither
		o(c)
		if c.kind == other {
			why := "an AIMD's option, for NewAIMD"
			if other == forThrottle {
				why = "a Throttle's option, for New"
			}
			return &limit.ParamError{Pkg: "adaptive", Param: "option", Value: i, Reason: why}
		}
	}
	return nil
}

// WithBuckets splits a Throttle's window into n buckets (n in [1, 1024]; 10
// by default): the window slides by window/n.
func WithBuckets(n int) Option {
	return func(c *config) { c.buckets, c.kind = int64(n), forThrottle }
}

// WithClock makes the plain (non-At) methods read clock instead of
// nanotime.Now.
func WithClock(clock nanotime.Clock) Option { return func(c *config) { c.clock = clock } }

// WithRand makes a Throttle's Allow draw from r (uniform 64-bit values)
// instead of math/rand/v2's Uint64, for deterministic tests. r must be safe
// for concurrent use if the Throttle is.
func WithRand(r func() uint64) Option { return func(c *config) { c.rand, c.kind = r, forThrottle } }

// New returns a Throttle with multiplier k over a trailing window. It
// returns a *limit.ParamError for k below 1 or not finite, a window shorter
// than its buckets in nanoseconds, a bucket count out of range, or a nil
// clock or random source.
func New(k float64, window time.Duration, opts ...Option) (*Throttle, error) {
	c := config{buckets: 10, clock: nanotime.Now, rand: rand.Uint64}
	if err := c.apply(opts, forAIMD); err != nil {
		return nil, err
	}
	switch {
	case !(k >= 1) || math.IsInf(k, 1):
		return nil, &limit.ParamError{Pkg: "adaptive", Param: "k", Value: k, Min: 1.0,
			Reason: "below 1 the throttle rejects requests a healthy backend would accept"}
	case c.buckets < 1 || c.buckets > 1024:
		return nil, &limit.ParamError{Pkg: "adaptive", Param: "buckets", Value: int(c.buckets), Min: 1, Max: 1024}
	case int64(window) < c.buckets:
		return nil, &limit.ParamError{Pkg: "adaptive", Param: "window", Value: window, Min: time.Duration(c.buckets),
			Reason: "each bucket must be at least 1ns"}
	case c.clock == nil:
		return nil, &limit.ParamError{Pkg: "adaptive", Param: "clock", Value: nil, Reason: "the clock must not be nil"}
	case c.rand == nil:
		return nil, &limit.ParamError{Pkg: "adaptive", Param: "rand", Value: nil, Reason: "the random source must not be nil"}
	}
	t := &Throttle{
		k: k, bucket: int64(window) / c.buckets, nb: c.buckets,
		clock: c.clock, rand: c.rand, ring: make([]snapshot, c.buckets+1),
	}
	t.latest.Store(math.MinInt64)
	for i := range t.ring {
		t.ring[i].seq.Store(none)
	}
	return t, nil
}

// Allow is AllowAt with the Throttle's clock.
func (t *Throttle) Allow() bool { return t.AllowAt(t.now()) }

// AllowAt counts a request at now and reports whether to send it: false
// means reject it locally, with the probability in the package doc. Call
// Accepted (or AcceptedAt) for each sent request the backend accepted.
func (t *Throttle) AllowAt(now int64) bool {
	if t.bucket == 0 {
		return false // the zero Throttle
	}
	req, acc := t.counts(now)
	t.requests.Add(1)
	p := t.prob(req, acc)
	if p <= 0 {
		return true
	}
	return float64(t.rand()>>11)*(1.0/(1<<53)) >= p
}

// Accepted is AcceptedAt with the Throttle's clock.
func (t *Throttle) Accepted() { t.AcceptedAt(t.now()) }

// AcceptedAt counts a request the backend accepted, at now.
func (t *Throttle) AcceptedAt(now int64) {
	if t.bucket == 0 {
		return
	}
	t.enter(now)
	t.accepts.Add(1)
}

// RejectProbability returns the probability with which a request now (by
// the Throttle's clock) would be rejected.
func (t *Throttle) RejectProbability() float64 { return t.rejectProbabilityAt(t.now()) }

// rejectProbabilityAt returns the probability with which a request at now
// would be rejected.
func (t *Throttle) rejectProbabilityAt(now int64) float64 {
	if t.bucket == 0 {
		return 1
	}
	return t.prob(t.counts(now))
}

// countsAt returns the requests and accepts counted in the window at now.
func (t *Throttle) countsAt(now int64) (requests, accepts int64) {
	if t.bucket == 0 {
		return 0, 0
	}
	return t.counts(now)
}

// now reads the Throttle's clock, nanotime.Now for the zero Throttle.
func (t *Throttle) now() int64 {
	if t.clock == nil {
		return nanotime.Now()
	}
	return t.clock()
}

// prob is the book's formula.
func (t *Throttle) prob(req, acc int64) float64 {
	return max(0, (float64(req)-t.k*float64(acc))/float64(req+1))
}

// bucketOf returns floor(now / bucket).
func (t *Throttle) bucketOf(now int64) int64 {
	b := now / t.bucket
	if now%t.bucket < 0 {
		b--
	}
	return b
}

// enter moves the Throttle to now's bucket, recording the snapshot at its
// start if now is the first call in it, and returns the bucket.
func (t *Throttle) enter(now int64) int64 {
	b := t.bucketOf(now)
	for {
		l := t.latest.Load()
		if b <= l {
			return l
		}
		if t.latest.CompareAndSwap(l, b) {
			s := &t.ring[(b%int64(len(t.ring))+int64(len(t.ring)))%int64(len(t.ring))] // floor mod: consecutive buckets, consecutive slots
			s.seq.Store(none)                                                          // being written
			s.req.Store(t.requests.Load())
			s.acc.Store(t.accepts.Load())
			s.seq.Store(b)
			return b
		}
	}
}

// none marks a snapshot slot not (yet) holding a bucket's counts. A bucket
// numbered math.MinInt64 (only at 1ns buckets) is never snapshotted: a
// window that reaches back to it counts from the start.
const none = int64(math.MinInt64)

// counts returns the requests and accepts since the start of the window's
// first bucket: the counts now less the snapshot of the earliest bucket at
// or after it that has one (or, while that one is being written, of the
// latest bucket before it; or, with none, since the Throttle began).
func (t *Throttle) counts(now int64) (req, acc int64) {
	b := t.enter(now)
	req, acc = t.requests.Load(), t.accepts.Load()
	if b < math.MinInt64+t.nb {
		// The window reaches back to bucket math.MinInt64, which has no
		// snapshot: it holds every count.
		return max(0, req), max(0, acc)
	}
	first := b - t.nb + 1
	in, before := none, none // the best snapshot in the window, and before it
	var inReq, inAcc, bfReq, bfAcc int64
	for i := range t.ring {
		s := &t.ring[i]
		seq := s.seq.Load()
		if seq == none || seq > b {
			continue
		}
		r, a := s.req.Load(), s.acc.Load()
		if s.seq.Load() != seq {
			continue // rewritten meanwhile
		}
		switch {
		case seq >= first && (in == none || seq < in):
			in, inReq, inAcc = seq, r, a
		case seq < first && (before == none || seq > before):
			before, bfReq, bfAcc = seq, r, a
		}
	}
	switch {
	case in != none:
		req, acc = req-inReq, acc-inAcc
	case before != none:
		req, acc = req-bfReq, acc-bfAcc
	}
	return max(0, req), max(0, acc)
}
