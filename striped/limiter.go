package striped

import (
	"math"
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/cellrate/cellrate/atomic128"
	"github.com/cellrate/cellrate/internal/bucketcore"
	cellrun "github.com/cellrate/cellrate/internal/cell" // counter.go has a type cell
	"github.com/cellrate/cellrate/internal/intmath"
	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/nanotime"
)

// Limiter is a token bucket shared by all goroutines whose tokens are handed
// out through one cache a P, so that admissions on different Ps write
// different cache lines.
//
// # How it decides
//
// The shared bucket is package bucket's 128-bit state in a cell, run by its
// pure steps (step.Bucket's TakeUpTo, and one to read its refill line).
// Each P's cache holds tokens borrowed from it in one batch. A request is
// admitted from the calling P's cache with one compare-and-swap on that
// cache's line. When the cache lacks tokens, the P
// borrows what the request needs plus up to a batch more from the shared
// bucket, all or nothing for the part it needs. When the shared bucket lacks
// them too, the P remembers when the bucket empties (its refill line), and
// until that line says the bucket could hold enough, it denies from its
// cache without reading or writing the shared cell: denials write nothing
// shared.
//
// # Never over-admits
//
// For rate r and burst b, the admitted cost whose now values lie in any
// closed interval of length t is at most b + r*t, exactly, on every schedule.
// Proof: the shared bucket is the GCRA of its rate and burst, so each token it
// hands out owns a distinct refill slot (σ, σ+1/r] on its theoretical
// arrival time line, with σ no earlier than the take's now and σ+1/r no later
// than that now plus b/r. A cached token is admitted at now only if σ >= now
// and σ+1/r <= now+b/r (checked exactly, in the bucket's integer units).
// The slots of the tokens admitted in [s, s+t] are then disjoint intervals
// inside [s, s+t+b/r], so there are at most r*(t+b/r) = b + r*t of them.
// Tokens a cache does not use in time expire when the bucket's refill
// reaches their slot: holding them longer would let the refilled bucket and
// the cache admit the same slot twice.
//
// # Under-admits by at most what caches hold
//
// A request is denied only when the shared bucket lacks what the calling
// P's cache does not hold (a cached denial is one the bucket would give: its
// refill line only ever overstates what it holds). The rest of the tokens it
// is short of are in other caches: at most Batch() a cache, one cache for
// each P id seen so far (the largest GOMAXPROCS).
// They are stranded only while their P stays busy or until their slots pass:
// a cache that has not refilled for IdleAfter (an idle P) is emptied, as
// soon as the shared bucket denies some other P, into that P (its tokens
// keep their slots, so the bound above still holds); a P scans for idle
// caches at most once every IdleAfter/2. A cached token that nobody takes
// over in time expires; the bucket then refills its slot, so expired tokens
// are lost only while the bucket stays below full. Tokens borrowed from a
// full bucket expire within Batch()/r, which loses nothing (the bucket
// refills them meanwhile, as it would otherwise have overflowed); tokens
// borrowed from a bucket with a backlog last up to b/r, which is what a
// takeover recovers.
//
// # Scaling
//
// While the tokens last, an admission touches only its P's cache line, so
// admissions on N Ps run in parallel. The shared cell is written once a
// batch, and read by a denied P once its refill line says tokens may be
// there. At 64 cores: 64 caches of one line each (64 bytes on amd64, 128 on
// arm64); each admission is a compare-and-swap on its own line; the shared
// line takes one 128-bit compare-and-swap per Batch admissions (counted over
// all Ps), bouncing between the cores that borrow; a denied P re-reads the
// shared line at most once per refill of what it needs, and reads the 64
// caches at most once every IdleAfter/2. The default batch,
// burst/(2*GOMAXPROCS), keeps the caches to half the burst in all while
// GOMAXPROCS stays what it was at New. A cache's tokens last until the
// bucket would have refilled them: for a bucket kept near full (demand well below the rate) a
// batch of k lasts k/r, so the batch must cover what a P uses in that time
// for the P to stay off the shared line; a limiter whose burst is not a
// large multiple of GOMAXPROCS, or whose rate far exceeds its demand with a
// small burst, falls back to one shared compare-and-swap per admission, as
// a plain bucket does. Results report Remaining as the tokens left in the
// calling P's cache, a lower bound of what the limiter holds.
//
// # Time at the ends of int64
//
// Every sum of a time and a span saturates at the ends of int64 time. A
// loan whose last refill slot would end past math.MaxInt64 (a borrow within
// burst/r of the end) is taken for the request alone: its slots' end does
// not fit a cache, so none of it is cached.
//
// # What it does not do
//
// There is no Reserve, Wait, SetRate or SetBurst: cached tokens carry refill
// slots in the units of the rate and burst they were borrowed under, and a
// cache's view of the shared bucket (its refill line) holds only because
// nothing is ever given back to it; a reservation's debt, a give-back or a
// new rate would break both. Use a bucket.Limiter for those. As a member
// of a limit.All, a refund (Refund) goes back into the cache that served
// the admission, never to the shared bucket.
//
// The zero Limiter has burst 0: it admits nothing, refusing every n > 0 with
// limit.ErrCostExceedsBurst; make a Limiter with New or NewRate. A Limiter
// must not be copied after first use (go vet reports copies).
type Limiter struct {
	_      noCopy
	ps     bucketcore.Params
	batch  int64
	idle   int64 // IdleAfter in ns
	clock  nanotime.Clock
	caches perP[cache]
	_      [lineSize]byte
	state  atomic128.Uint64Pair // the shared bucket's bucketcore.State
	// borrows counts the writes of state (on its line, which they write
	// anyway): the benchmarks report it per admission. takeovers counts
	// idle caches taken over, for the tests.
	borrows, takeovers atomic.Uint64
	_                  [lineSize]byte
}

// timeBias encodes a cache's int64 times (empty, scan) so that the zero
// word means math.MinInt64: uint64(t) ^ timeBias.
const timeBias = 1 << 63

const (
	tokShift = 32        // a cache word is tokens<<tokShift | generation
	genMask  = 1<<32 - 1 // generation: odd while the owner refills the cache
	maxBatch = 1<<31 - 1 // tokens fit in the word's upper half
	minIdle  = time.Microsecond
)

// cacheData is one P's token cache.
type cacheData struct {
	// w holds the token count and a generation. Admissions and takeovers
	// compare-and-swap the count; the owner bumps the generation to an odd
	// value while it refills and to the next even value when done, so a
	// compare-and-swap that succeeds saw the same loan as its read of z.
	w atomic.Uint64
	// zNs and zRem give the end of the last held token's refill slot,
	// zNs + zRem/e ns exactly (zRem < e); the k held tokens are the last k
	// slots before it.
	zNs  atomic.Int64
	zRem atomic.Uint64
	// empty is the shared bucket's empty time (its refill line crosses 0
	// there), as seen by this cache's last look, encoded as uint64(t)^timeBias
	// so that the zero value means "never looked" (math.MinInt64).
	empty atomic.Uint64
	// since is the now of the cache's last refill: a cache that has not
	// refilled for IdleAfter may be taken over.
	since atomic.Int64
	// scan is the now before which this cache does not look for idle
	// caches again, encoded like empty (zero: look at once).
	scan atomic.Uint64
	mu   sync.Mutex // serialises the owner's refills
}

// cache pads cacheData to whole cache lines.
type cache struct {
	_ [(lineSize - unsafe.Sizeof(cacheData{})%lineSize) % lineSize]byte
	cacheData
}

// Option configures a Limiter.
type Option func(*config)

type config struct {
	batch, idle int64
	idleSet     bool
	clock       nanotime.Clock
}

// WithBatch sets how many tokens beyond a request's need a P borrows at
// once (default: burst/(2*GOMAXPROCS) at New, at least 1): at most that
// many tokens sit in each P's cache. It must be in [1, burst] and below 2^31.
func WithBatch(n int64) Option { return func(c *config) { c.batch = n } }

// WithIdleAfter sets how long a cache must go without refilling before a
// P that the shared bucket denies may take its tokens over (default: a
// quarter of burst/rate, at least 1µs). It must be at least 1µs.
func WithIdleAfter(d time.Duration) Option {
	return func(c *config) { c.idle, c.idleSet = int64(d), true }
}

// WithClock makes the plain (non-At) methods read clock instead of
// nanotime.Now: for example nanotime.Since(), which follows
// testing/synctest's fake time. A nil clock is a *limit.ParamError.
func WithClock(clock nanotime.Clock) Option { return func(c *config) { c.clock = clock } }

// New returns a full limiter refilling events tokens per period with the
// given burst. A parameter out of range is a *limit.ParamError (see
// bucket.New and the options).
func New(events int64, period time.Duration, burst int64, opts ...Option) (*Limiter, error) {
	ps, err := newParams(events, period, burst)
	if err != nil {
		return nil, err
	}
	return fromParams(ps, opts...)
}

// NewRate returns a full limiter refilling rate tokens per second with the
// given burst; bucket.NewRate says how the float is read and which values
// are refused.
func NewRate(rate float64, burst int64, opts ...Option) (*Limiter, error) {
	ps, err := bucketcore.RateParams(rate, burst)
	if err != nil {
		return nil, relabel(err)
	}
	return fromParams(ps, opts...)
}

// newParams is bucketcore.NewParams, with this package's name in its errors.
func newParams(events int64, period time.Duration, burst int64) (bucketcore.Params, error) {
	ps, err := bucketcore.NewParams(events, period, burst)
	return ps, relabel(err)
}

// relabel makes a *limit.ParamError from package bucket this package's:
// the parameter and its range are the same.
func relabel(err error) error {
	if pe, ok := err.(*limit.ParamError); ok {
		pe.Pkg = "striped"
	}
	return err
}

// fromParams returns a full limiter with Params ps. The zero Params, and
// an option out of range, are a *limit.ParamError.
func fromParams(ps bucketcore.Params, opts ...Option) (*Limiter, error) {
	if ps.Unit() == 0 {
		return nil, &limit.ParamError{Pkg: "striped", Param: "params", Value: ps, Reason: "the zero Params: make them with New or NewRate"}
	}
	l := &Limiter{ps: ps}
	burst := ps.Burst()
	cfg := config{batch: min(max(1, burst/int64(2*runtime.GOMAXPROCS(0))), maxBatch), clock: nanotime.Now}
	for i, o := range opts {
		if o == nil {
			return nil, &limit.ParamError{Pkg: "striped", Param: "option", Value: i, Reason: "a nil Option"}
		}
		o(&cfg)
	}
	if !cfg.idleSet {
		// A quarter of burst/rate: cap/e ns over 4.
		cfg.idle = max(int64(minIdle), int64(min(l.cap()/l.e()/4, math.MaxInt64)))
	}
	switch {
	case cfg.batch < 1 || cfg.batch > burst || cfg.batch > maxBatch:
		return nil, &limit.ParamError{Pkg: "striped", Param: "batch", Value: cfg.batch, Min: int64(1), Max: min(burst, maxBatch)}
	case cfg.idle < int64(minIdle):
		return nil, &limit.ParamError{Pkg: "striped", Param: "idle-after", Value: time.Duration(cfg.idle), Min: minIdle}
	case cfg.clock == nil:
		return nil, &limit.ParamError{Pkg: "striped", Param: "clock", Value: cfg.clock, Reason: "must not be nil"}
	}
	l.batch, l.idle, l.clock = cfg.batch, cfg.idle, cfg.clock
	return l, nil
}

// e, p and cap read the shared bucket's Params: the units it refills per
// ns, the units a token is, and the units it holds when full.
func (l *Limiter) e() uint64 {
	ev, _ := l.ps.Rate()
	return uint64(ev)
}
func (l *Limiter) p() uint64   { return uint64(l.ps.Unit()) }
func (l *Limiter) cap() uint64 { return uint64(l.ps.Burst()) * l.p() }

// Batch returns how many tokens beyond a request's need a P borrows at once.
func (l *Limiter) Batch() int64 { return l.batch }

// IdleAfter returns how long a cache must go without refilling before its
// tokens may be taken over.
func (l *Limiter) IdleAfter() time.Duration { return time.Duration(l.idle) }

// Allow is AllowAt with the Limiter's clock.
func (l *Limiter) Allow() bool { return l.AllowAt(l.now()) }

// AllowAt reports whether one token is available at now, and takes it if so.
func (l *Limiter) AllowAt(now int64) bool { return l.batch != 0 && l.allowN(l.local(), now, 1).OK }

// now reads the Limiter's clock, nanotime.Now for the zero Limiter.
func (l *Limiter) now() int64 {
	if l.clock == nil {
		return nanotime.Now()
	}
	return l.clock()
}

// zeroResult is the zero Limiter's Result for an n in [0, burst], that is 0:
// admitted, with nothing left. It touches no cache.
var zeroResult = limit.Result{OK: true}

// AllowN is AllowNAt with the Limiter's clock.
func (l *Limiter) AllowN(n int64) (limit.Result, error) { return l.AllowNAt(l.now(), n) }

// AllowNAt takes n tokens at now if all n are available, else none.
// n < 0 returns limit.ErrNegativeCost, n > burst limit.ErrCostExceedsBurst.
func (l *Limiter) AllowNAt(now, n int64) (limit.Result, error) {
	switch {
	case n < 0:
		return limit.Result{RetryAfter: limit.Never}, limit.ErrNegativeCost
	case n > l.ps.Burst():
		return limit.Result{RetryAfter: limit.Never}, limit.ErrCostExceedsBurst
	case l.batch == 0:
		return zeroResult, nil
	}
	return l.allowN(l.local(), now, n), nil
}

// Remaining is RemainingAt with the Limiter's clock.
func (l *Limiter) Remaining() int64 { return l.RemainingAt(l.now()) }

// RemainingAt returns the whole tokens a request on the calling P could
// take at now if nothing else happened first: those usable in its P's cache
// plus those the shared bucket holds. Tokens in other Ps' caches are not
// counted.
func (l *Limiter) RemainingAt(now int64) int64 {
	if l.batch == 0 {
		return 0
	}
	v, s := l.look(l.local(), now)
	return int64(v) + l.ps.Remaining(s, now)
}

// Tokens is TokensAt with the Limiter's clock.
func (l *Limiter) Tokens() float64 { return l.TokensAt(l.now()) }

// TokensAt is RemainingAt with the shared bucket's fraction of a token (and
// its shortfall at a stale now), for display: the float rounds; decisions
// never use it.
func (l *Limiter) TokensAt(now int64) float64 {
	if l.batch == 0 {
		return 0
	}
	v, s := l.look(l.local(), now)
	return float64(v) + l.ps.Tokens(s, now)
}

// look returns the tokens usable at now in cache c (none while it is being
// refilled) and the shared bucket's state.
func (l *Limiter) look(c *cache, now int64) (uint64, bucketcore.State) {
	var v uint64
	if w := c.w.Load(); w&1 == 0 {
		v, _ = l.usable(w>>tokShift, c.end(), now)
	}
	t, d := l.state.Load()
	return v, bucketcore.State{T: t, Deficit: d}
}

// allowN decides a request of n in [0, burst] on cache c.
func (l *Limiter) allowN(c *cache, now, n int64) limit.Result {
	r, _ := l.admit(c, now, n)
	return r
}

// undo is what a refund of an admission needs: the cache word the
// admission wrote, and the word a refund puts back while the cache still
// holds that one. Both are zero when the admission wrote no word.
type undo struct{ after, back uint64 }

// admit is allowN with the undo of its admission.
func (l *Limiter) admit(c *cache, now, n int64) (limit.Result, undo) {
	w := c.w.Load()
	if w&1 == 0 {
		z := c.end()
		v, _ := l.usable(w>>tokShift, z, now)
		if n == 0 {
			return limit.Result{OK: true, Remaining: int64(v)}, undo{}
		}
		if next := (v-uint64(n))<<tokShift | w&genMask; v >= uint64(n) && c.w.CompareAndSwap(w, next) {
			return limit.Result{OK: true, Remaining: int64(v) - n}, undo{next, w}
		}
		if v < uint64(n) && l.dry(c, now, n-int64(v)) && now < c.scanAt() {
			return limit.Result{Remaining: int64(v), RetryAfter: time.Duration(l.retryAfter(c, now, n, v, z))}, undo{}
		}
	}
	return l.refill(c, now, n)
}

// local returns the calling P's cache, growing the table if GOMAXPROCS grew.
// The P id only picks the cache: everything done to it is atomic, so a
// goroutine that moves to another P meanwhile is still correct.
func (l *Limiter) local() *cache {
	c, _ := l.localID()
	return c
}

// localID is local with the cache's index in the table.
func (l *Limiter) localID() (*cache, int) {
	for {
		pid := procPin()
		c := l.caches.get(pid)
		procUnpin()
		if c != nil {
			return c, pid
		}
		l.caches.grow(pid)
	}
}

// end is a point on the shared bucket's time line: ns + rem/e ns, rem < e.
type end struct {
	ns  int64
	rem uint64
}

// usable returns how many of the last k slots before z may be admitted at
// now: those whose slot starts no earlier than now (z - i/r >= now for the
// i-th from the end). early reports a now so stale that even the last slot
// ends more than burst/r after it; then none is usable yet, and none has
// expired.
func (l *Limiter) usable(k uint64, z end, now int64) (v uint64, early bool) {
	if k == 0 || z.ns < now {
		return 0, false
	}
	// (z - now)*e in units, exactly.
	hi, lo := bits.Mul64(uint64(z.ns)-uint64(now), l.e())
	lo, carry := bits.Add64(lo, z.rem, 0)
	if hi+carry != 0 || lo > l.cap() {
		return 0, true
	}
	// All k usable is the common case; it needs no division.
	if kh, kl := bits.Mul64(k, l.p()); kh == 0 && kl <= lo {
		return k, false
	}
	if testHookPartial != nil {
		testHookPartial()
	}
	return lo / l.p(), false
}

// testHookPartial, when set by a test, runs where usable finds only some of
// a cache's tokens usable: between allowN's load of the cache word and its
// compare-and-swap. It sits on the division's branch, never on the path
// where all are usable, and is nil outside tests.
var testHookPartial func()

// refill is the slow path: the calling P's cache lacks n usable tokens.
func (l *Limiter) refill(c *cache, now, n int64) (limit.Result, undo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	// Close the cache: admissions and takeovers skip an odd generation.
	w := cellrun.Run64(&c.w, func(w uint64) (uint64, uint64, bool) { return w&genMask + 1, w, true })
	gen, k, z := w&genMask, w>>tokShift, c.end()
	v, early := l.usable(k, z, now)
	if early {
		// A now before all of this cache's slots: keep them for later. The
		// shared bucket surely holds nothing at such a now: the loan's end
		// z is its empty time at the loan plus burst/r (lines), so
		// now < z - burst/r is before that empty time, and no take moves a
		// bucket's empty time back. Neither a borrow nor a takeover (which
		// needs this cache empty: a cache holds one loan's slots) can
		// admit, so deny at once.
		c.open(gen, z, k)
		return limit.Result{RetryAfter: time.Duration(l.retryAfter(c, now, n, 0, z))}, undo{}
	}
	if v >= uint64(n) { // another goroutine refilled this cache meanwhile
		// Same loan (z), so a refund may put back the word as it was.
		return limit.Result{OK: true, Remaining: int64(v) - n}, undo{c.open(gen, z, v-uint64(n)), w}
	}
	// The v usable tokens go to this request with need more; expired ones
	// are dropped.
	need := n - int64(v)
	if !l.dry(c, now, need) {
		if m, zm, ok := l.borrow(c, now, need, need+l.batch); ok {
			c.since.Store(now) // before open: a thief seeing the loan sees it new
			after := c.open(gen, zm, uint64(m-need))
			return limit.Result{OK: true, Remaining: m - need}, l.giveBack(after, uint64(need))
		}
	}
	if zt, kt, ok := l.takeOver(c, now, need); ok {
		c.since.Store(now)
		after := c.open(gen, zt, kt)
		return limit.Result{OK: true, Remaining: int64(kt)}, l.giveBack(after, uint64(need))
	}
	c.open(gen, z, v)
	return limit.Result{Remaining: int64(v), RetryAfter: time.Duration(l.retryAfter(c, now, n, v, z))}, undo{}
}

// giveBack is the undo of an admission that took need tokens of the loan
// it left in the cache (borrowed, or taken over) and v of the loan before:
// a refund puts the need back into the cache, as the first of its loan's
// slots again, up to what a cache word holds; the v stay spent, since a
// cache holds one loan's slots.
func (l *Limiter) giveBack(after, need uint64) undo {
	need = min(need, maxBatch-after>>tokShift)
	return undo{after, after + need<<tokShift}
}

// TakeAt is AllowNAt that also returns, when it admits n > 0, the Receipt
// Refund needs (limit.Member). Its Before holds the cache's index and the
// cache word a refund puts back, its After the cache word the admission
// wrote.
func (l *Limiter) TakeAt(now, n int64) (limit.Result, limit.Receipt, error) {
	switch {
	case n < 0:
		return limit.Result{RetryAfter: limit.Never}, limit.Receipt{}, limit.ErrNegativeCost
	case n > l.ps.Burst():
		return limit.Result{RetryAfter: limit.Never}, limit.Receipt{}, limit.ErrCostExceedsBurst
	case l.batch == 0:
		return zeroResult, limit.Receipt{}, nil
	}
	c, pid := l.localID()
	r, rc := l.takeAt(c, pid, now, n)
	return r, rc, nil
}

// takeAt is TakeAt on cache c, the table's pid-th.
func (l *Limiter) takeAt(c *cache, pid int, now, n int64) (limit.Result, limit.Receipt) {
	r, u := l.admit(c, now, n)
	if !r.OK || n == 0 {
		return r, limit.Receipt{}
	}
	return r, limit.Receipt{At: now, N: n, Before: [2]uint64{uint64(pid), u.back}, After: [2]uint64{u.after}}
}

// Refund gives back the tokens of the admission that returned rc (see
// limit.Member), into the cache that served it, while that cache's word is
// still the one the admission wrote (no other admission, refill or takeover
// on it since, or all since refunded). For an admission the cache served
// (all but about one in Batch()) that is exact: the cache is as before it.
// An admission that borrowed from the shared bucket or took an idle cache
// over also used the tokens its cache held from the loan before; a refund
// puts back only the ones of the new loan (the cache holds one loan's
// slots), never more than exactness would. Otherwise it gives back nothing:
// other admissions were decided with the tokens taken. The cache word's
// generation tells loans apart; it has 31 bits, so a receipt refunded after
// 2^31 refills of its cache could meet its word again.
func (l *Limiter) Refund(rc limit.Receipt) {
	if rc.N == 0 {
		return
	}
	c := l.caches.get(int(rc.Before[0]))
	if c == nil {
		return
	}
	after, back := rc.After[0], rc.Before[1]
	cellrun.Run64(&c.w, func(w uint64) (uint64, struct{}, bool) { return back, struct{}{}, w == after })
}

// open publishes a cache's new loan and reopens it to admissions; it
// returns the word it stored.
func (c *cache) open(gen uint64, z end, k uint64) uint64 {
	c.zNs.Store(z.ns)
	c.zRem.Store(z.rem)
	w := k<<tokShift | (gen+2)&genMask
	c.w.Store(w)
	return w
}

// end returns the end of the cache's loan. Read it after the cache word:
// a compare-and-swap of the word that succeeds proves it was this loan's.
func (c *cache) end() end { return end{c.zNs.Load(), c.zRem.Load()} }

// emptyAt returns the shared bucket's empty time as the cache last saw it.
func (c *cache) emptyAt() int64 { return int64(c.empty.Load() ^ timeBias) }

// scanAt returns the now from which the cache may look for idle caches.
func (c *cache) scanAt() int64 { return int64(c.scan.Load() ^ timeBias) }

// saw records the shared bucket's empty time t. It only moves forward:
// takes only move the bucket's refill line later, so an older look is
// still a valid (earlier) bound.
func (c *cache) saw(t int64) {
	if t > c.emptyAt() {
		c.empty.Store(uint64(t) ^ timeBias)
	}
}

// dry reports whether the shared bucket surely holds fewer than j tokens at
// now by the refill line the cache last saw: the bucket holds at most
// (now-empty)*r tokens, as takes only lower it and nothing is given back.
func (l *Limiter) dry(c *cache, now, j int64) bool {
	empty := c.emptyAt()
	if empty == math.MinInt64 {
		return false // never looked, or a line below the int64 range
	}
	if now <= empty {
		return true
	}
	hi, lo := bits.Mul64(uint64(now)-uint64(empty), l.e())
	return hi == 0 && lo < uint64(j)*l.p()
}

// borrow takes between need and want tokens from the shared bucket at now
// (Params.TakeUpTo), all of them or none if it holds fewer than need. It
// returns how many it took and the end of their last slot. End of time: if
// that end does not fit in int64 time (lines saturates), it takes
// need alone, which the caller admits at once and does not cache.
func (l *Limiter) borrow(c *cache, now, need, want int64) (m int64, z end, ok bool) {
	type loan struct {
		m     int64
		empty int64 // the bucket's empty time after the loan, or as it was
		z     end
	}
	ln := cellrun.Run128(&l.state, func(t, d uint64) (uint64, uint64, loan, bool) {
		s := bucketcore.State{T: t, Deficit: d}
		next, m := l.ps.TakeUpTo(s, now, want)
		if m < need {
			empty, _, _ := lines(&l.ps, s)
			return t, d, loan{empty: empty}, false
		}
		empty, full, rem := lines(&l.ps, next)
		if full == math.MaxInt64 && m > need {
			next, m = l.ps.TakeUpTo(s, now, need)
			empty, full, rem = lines(&l.ps, next)
		}
		return next.T, next.Deficit, loan{m, empty, end{full, rem}}, true
	})
	c.saw(ln.empty)
	if ln.m == 0 {
		return 0, end{}, false
	}
	l.borrows.Add(1)
	return ln.m, ln.z, true
}

// takeOver looks, at most once every IdleAfter/2, for a cache that has not
// refilled for IdleAfter and holds at least need tokens usable at now, and
// takes all of them: need for the request, the rest (returned with their
// loan's end) for the caller's cache. The tokens keep their slots.
func (l *Limiter) takeOver(c *cache, now, need int64) (z end, k uint64, ok bool) {
	if now < c.scanAt() {
		return end{}, 0, false
	}
	for _, x := range l.caches.all() {
		if x == c || intmath.SatAdd(x.since.Load(), l.idle) > now {
			continue
		}
		type got struct {
			z  end
			v  uint64
			ok bool
		}
		g := cellrun.Run64(&x.w, func(w uint64) (uint64, got, bool) {
			if w&1 != 0 || w>>tokShift == 0 {
				return w, got{}, false
			}
			zx := x.end()
			v, _ := l.usable(w>>tokShift, zx, now)
			if v < uint64(need) {
				return w, got{}, false
			}
			return w & genMask, got{zx, v, true}, true
		})
		if g.ok {
			l.takeovers.Add(1)
			return g.z, g.v - uint64(need), true
		}
	}
	c.scan.Store(uint64(intmath.SatAdd(now, l.idle/2)) ^ timeBias)
	return end{}, 0, false
}

// retryAfter estimates, for a denied request of n with v usable tokens in a
// cache whose loan ends at z, how long until the shared bucket plus the
// cache could cover it if nothing else were taken: until the bucket holds
// n-v while the cache's v are still usable, else until it holds n.
func (l *Limiter) retryAfter(c *cache, now, n int64, v uint64, z end) int64 {
	empty := c.emptyAt()
	when := intmath.SatAdd(empty, l.ceilNs(uint64(n)-v))
	// The first of the v starts at z - v/r: usable until then.
	if v != 0 && when > intmath.SatAdd(z.ns, intmath.FloorDiv(int64(z.rem)-int64(v*l.p()), l.e())) {
		when = intmath.SatAdd(empty, l.ceilNs(uint64(n)))
	}
	if when <= now {
		return 1
	}
	return int64(min(uint64(when)-uint64(now), uint64(limit.Never)))
}

// ceilNs returns the whole ns the bucket takes to refill j tokens.
func (l *Limiter) ceilNs(j uint64) int64 {
	// j*p <= 2^61 and e < 2^63: the sum cannot wrap.
	return int64((j*l.p() + l.e() - 1) / l.e())
}

var _ limit.Member = (*Limiter)(nil)
