package redis

import (
	"context"
	"errors"
	"math"
	"math/big"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cellrate/cellrate/limit"
)

// WithBatch caps how many units a TwoTier borrows from Redis in one round
// trip (a request for more units still borrows them). Below the cap, each
// process borrows what it spent in half a lease at its recent pace: the
// size grows (at most doubling) while units run out early and shrinks when
// they are left over. Default: half the Redis burst (see NewTwoTier), at
// least 1. NewTwoTier only: NewGCRA and NewWindow refuse it.
func WithBatch(units int64) Option { return func(c *config) { c.batch, c.tierOnly = units, true } }

// WithLease sets how long a TwoTier may spend the units it borrowed, from
// just before it asked; units unspent then are void. Default: the time the
// rate takes to refill a quarter of the burst, within [1ms, 1s].
// NewTwoTier only: NewGCRA and NewWindow refuse it.
func WithLease(d time.Duration) Option { return func(c *config) { c.lease, c.tierOnly = d, true } }

// WithFailOpen makes a TwoTier, while Redis fails, admit on a limit local
// to the process: share (in (0, 1]) of the rate and of the burst, rounded
// down, at least 1. The default is to fail closed: deny, with the error.
// NewTwoTier only: NewGCRA and NewWindow refuse it.
func WithFailOpen(share float64) Option { return func(c *config) { c.share, c.tierOnly = share, true } }

// WithRetry sets how long a TwoTier, after three round trips in a row to
// one Redis node failed, decides that node's keys without asking it again
// (denying, or on the fail-open limit). Default 100ms. NewTwoTier only:
// NewGCRA and NewWindow refuse it.
func WithRetry(d time.Duration) Option { return func(c *config) { c.retry, c.tierOnly = d, true } }

// ErrUnavailable is what a failing-closed TwoTier returns, without a round
// trip, for a key whose Redis node failed three times in a row, in the
// WithRetry span after.
var ErrUnavailable = errors.New("redis: Redis failed; not retried yet")

// tripAfter is how many round trips in a row must fail before a TwoTier
// stops asking Redis for its retry span.
const tripAfter = 3

// Token pool word: the lease's deadline in ms of the monotonic clock above
// the units left.
const (
	tokBits = 24
	tokMask = 1<<tokBits - 1
)

// TwoTier is a GCRA shared through Redis that answers most requests
// without a round trip: each process borrows units from Redis in batches
// sized to its own demand, and admits from them with one atomic
// compare-and-swap; a process that finds the key empty reserves the next
// units and denies locally until each is there. Use it when a round trip per
// request costs too much; call Close when the process stops, so the units
// it holds go to the others. It is safe for concurrent use.
//
// # The bound
//
// Across all processes, the units admitted in any interval of length t
// are at most burst + events*t/period, exactly, as for one limiter: the
// Redis limiter's burst is lowered by ceil(events*lease/period), the most
// the rate refills in a lease. Borrowed units are spent at most once (each
// leaves the pool by one compare-and-swap) and only within their lease:
// a unit is admitted only if the clock, read after it was taken, is before
// the lease's end, counted from before the request to Redis. So every unit
// admitted in [a, a+t] was borrowed by a decision of Redis in [a-lease,
// a+t], an interval in which the Redis limiter admits at most
// burst' + events*(t+lease)/period <= burst + events*t/period. Times are
// the server's clock for borrowing and each process's monotonic clock for
// spending: the bound assumes they run at the same rate (not that they
// agree), as clocks on one machine or under NTP do. SetRate changes the
// rate while the limiter runs, with the bound it states.
//
// A borrow that finds the key empty reserves units to come: Redis admits
// them one at a time, each at the first time it is there, as that many
// requests of one in a row would be (so no other request is admitted
// before them, and the bound above counts them at those times), and
// returns the wait for the first. The process admits each from the time
// it is there at the latest (the wait and the rate's refill, counted from
// after the reply) until a lease after it at the earliest (counted from
// before the request): the argument above holds unit by unit. The line of
// reservations ends two Redis bursts ahead of now; a borrow finding it
// longer is denied.
//
// Units left unspent when a lease ends are void in the process, and go
// back to Redis with its next borrow of the key if nothing was admitted
// on the key since its last borrow: the script then undoes that many
// units of that borrow, leaving exactly the state a smaller borrow would
// have left (capped where the bucket would be full anyway), so the bound
// above still holds; the pool is emptied before they are sent, so none is
// spent or given back twice. Otherwise they are lost.
//
// # What batching costs
//
// The bound is kept by admitting less: the burst available at once is
// lower by ceil(events*lease/period), and units a process holds cannot
// serve another. Each process borrows about what it spends in half a
// lease (see WithBatch), so a light process holds little; units left when
// a lease ends go back as above or are lost. A process that finds the key
// empty reserves what the rate refills in half a lease (at least two
// units, at most the batch), and holds the line no longer than that: a
// round trip comes back without units only when the line of reservations
// is two Redis bursts long. Close gives back what a process holds when it
// stops, reserved units too.
//
// # Faults
//
// Every round trip is bounded by WithTimeout (default 100ms). When Redis
// fails (down, stopped, failing over) a call that sees the error denies
// and returns it (failing closed), or decides on a limit local to the
// process (failing open, WithFailOpen: with a nil error, counted in
// Stats). After three failures in a row on one Redis node, for WithRetry
// no round trip is made to that node: a TwoTier failing closed denies its
// keys with ErrUnavailable, one failing open decides them on its local
// limit. Units already borrowed are spent as usual, reserved ones at their
// times. Then it asks the node again; a success resets its count. The
// count is kept per node (per master of a ClusterClient, per shard of a
// Ring), so a node's failure is felt only by the keys it serves.
//
// A Redis restarted empty (without persistence) has forgotten every key.
// The first process to borrow a key afterwards rebuilds it from the state
// its own last borrow wrote, so what is forgotten is only what other
// processes borrowed of the key after that: nothing when one process uses
// the key, and never more than two Redis bursts (a full bucket and a full
// line of reservations). Over the bound, a restart can admit at most that
// much per key, once.
//
// A failover to a replica that had not received the last writes forgets
// the borrows in them while their units are spent: over the bound, at
// most two Redis bursts per key (a full bucket and a full line of
// reservations), once per failover, and in practice what was borrowed in
// the replication lag. A borrow whose reply is lost (past the timeout, or
// a connection cut after the server ran it) may have taken units that no
// process spends: they are lost to every process, never admitted; a lost
// reservation lengthens the line of the key until its units' times pass.
// So after a failure on a node, a borrow asks only the units its request
// needs, until one succeeds.
//
// A TwoTier not made by NewTwoTier (the zero TwoTier, or a nil pointer)
// denies every request with an error that is ErrClosed for errors.Is. A
// TwoTier must not be copied after first use (go vet reports copies).
type TwoTier struct {
	r         *Limiter
	rate      atomic.Pointer[tierRate] // in force; replaced whole by SetRate
	setting   sync.Mutex               // one SetRate at a time
	burst     int64                    // of the whole, as given
	keep      int64                    // burst less the Redis burst: what a lease may refill
	maxLease  int64                    // ns, the lease asked for (WithLease or its default)
	batch     int64
	retry     int64 // ns
	share     float64
	entries   sync.Map // key -> *entry
	trips     atomic.Int64
	errs      atomic.Int64
	fallbacks atomic.Int64
	nodes     nodes // failures in a row and retry spans, per Redis node
	sweeping  sync.Mutex
	swept     atomic.Int64 // monotonic ns of the last sweep
	closed    atomic.Bool
}

type entry struct {
	word      atomic.Uint64 // deadline ms << tokBits | units
	denyUntil atomic.Int64  // monotonic ns
	mu        sync.Mutex    // one borrower at a time
	last      string        // the value this process's last borrow wrote (under mu)
	lastM     int64         // the units it brought, not yet given back (under mu)
	at, got   int64         // when the last borrow was asked, and the units it brought (under mu)
	size      int64         // the units the next borrow asks (under mu)
	zeros     int64         // borrows that found none, halved by each that found some (under mu)
	res       reservation   // units Redis admitted at times to come (under mu)
	prog      *program      // the parameter set of the last borrow (under mu)
	reserving atomic.Bool   // res holds units not yet in the pool
	fb        atomic.Pointer[localLimiter]
}

// reservation is what a borrow that found the key empty holds: n units
// Redis admitted one at a time at rate, each at the first time it was
// there. Unit i may be spent from base+refill(i) (when it is there, at the
// latest) until end+refill(i)-1 (a lease from its time, at the earliest);
// out are in the pool already.
type reservation struct {
	n, out, base, end int64
	rate              *tierRate
}

// tierRate is a TwoTier's rate and what follows from it: the lease (the
// longest, up to the one asked for, in which the rate refills at most
// keep units), the units it refills in half a lease, and the Redis
// limiter's parameter set.
type tierRate struct {
	events int64
	period time.Duration
	lease  int64 // ns
	half   int64 // at least 1
	prog   *program
}

// Stats counts a TwoTier's round trips to Redis, the errors among them and
// the decisions made on the fail-open limit.
type Stats struct{ RoundTrips, Errors, Fallbacks int64 }

// Stats returns the counts so far.
func (t *TwoTier) Stats() Stats {
	if t == nil {
		return Stats{}
	}
	return Stats{t.trips.Load(), t.errs.Load(), t.fallbacks.Load()}
}

// NewTwoTier returns a two-tier limiter of events per period and burst,
// shared by every process that makes one with the same client's servers,
// prefix and parameters. The burst must exceed events*lease/period (the
// Redis burst, burst - ceil(events*lease/period), must be at least the
// batch) and be below 2^24. Refused values, a nil client, a prefix with
// braces and a nil option return a *limit.ParamError.
func NewTwoTier(client Client, prefix string, events int64, period time.Duration, burst int64, opts ...Option) (*TwoTier, error) {
	if err := checkClient(client); err != nil {
		return nil, err
	}
	if _, err := newGCRAParams(events, period, burst); err != nil {
		return nil, err
	}
	if burst >= 1<<tokBits {
		return nil, paramError("burst", burst, int64(2), int64(1<<tokBits-1), "a two-tier pool holds 24 bits")
	}
	cfg, err := newConfig(opts, true)
	if err != nil {
		return nil, err
	}
	if cfg.lease == 0 {
		// a quarter of the burst's refill time, within [1ms, 1s]
		l := new(big.Int).Mul(big.NewInt(burst), big.NewInt(int64(period)))
		l.Quo(l, big.NewInt(4*events))
		cfg.lease = time.Second
		if l.IsInt64() {
			cfg.lease = max(time.Millisecond, min(time.Duration(l.Int64()), time.Second))
		}
	}
	if cfg.lease < time.Millisecond || cfg.lease > time.Hour {
		return nil, paramError("lease", cfg.lease, time.Millisecond, time.Hour, "")
	}
	// keep = ceil(events*lease/period)
	keep := new(big.Int).Mul(big.NewInt(events), big.NewInt(int64(cfg.lease)))
	keep.Add(keep, big.NewInt(int64(period)-1)).Quo(keep, big.NewInt(int64(period)))
	if !keep.IsInt64() || keep.Int64() >= burst {
		return nil, paramError("burst", burst, new(big.Int).Add(keep, big.NewInt(1)).String(), int64(1<<tokBits-1),
			"the burst must exceed what the rate refills in a lease")
	}
	rb := burst - keep.Int64()
	if cfg.batch == 0 {
		cfg.batch = max(1, rb/2)
	}
	if cfg.batch < 1 || cfg.batch > rb {
		return nil, paramError("batch", cfg.batch, int64(1), rb, "at most the Redis burst, burst - ceil(events*lease/period)")
	}
	if cfg.share < 0 || cfg.share > 1 || math.IsNaN(cfg.share) {
		return nil, paramError("share", cfg.share, 0.0, 1.0, "")
	}
	if cfg.retry == 0 {
		cfg.retry = 100 * time.Millisecond
	}
	if cfg.timeout == 0 {
		cfg.timeout = 100 * time.Millisecond
	}
	if cfg.retry < 0 {
		return nil, paramError("retry", cfg.retry, time.Duration(0), nil, "")
	}
	r, err := NewGCRA(client, prefix, events, period, rb, WithTimeout(cfg.timeout), WithGrace(cfg.grace))
	if err != nil {
		return nil, err
	}
	t := &TwoTier{r: r, burst: burst, keep: keep.Int64(), maxLease: int64(cfg.lease), batch: cfg.batch,
		retry: int64(cfg.retry), share: cfg.share}
	rt, err := t.newRate(events, period)
	if err != nil {
		return nil, err
	}
	t.rate.Store(rt)
	return t, nil
}

// redisBurst returns the burst of the Redis limiter the processes borrow
// from: the burst less what the rate refills in a lease.
func (t *TwoTier) redisBurst() int64 {
	if t == nil || t.r == nil {
		return 0
	}
	return t.r.max
}

// Allow reports whether one unit may be taken now for key.
func (t *TwoTier) Allow(ctx context.Context, key string) (bool, error) {
	r, _, err := t.allow(ctx, key, 1)
	return r.OK, err
}

// AllowN takes n units for key if all n are available. Remaining is the
// units this process's pool for key may still spend (not the global count);
// RetryAfter is the wait Redis gave, the wait until units reserved make n,
// or an estimate from the rate when the pool held some units but fewer
// than n. n above the Redis burst returns limit.ErrCostExceedsBurst. On a
// key that others keep empty, n units must be in the pool together, each
// within its lease: n above what the rate refills in a lease may wait
// until the others ask less (with NewGCRA too, small requests take units
// as they come).
func (t *TwoTier) AllowN(ctx context.Context, key string, n int64) (limit.Result, error) {
	r, _, err := t.allow(ctx, key, n)
	return r, err
}

func (t *TwoTier) entry(key string) *entry {
	if e, ok := t.entries.Load(key); ok {
		return e.(*entry)
	}
	e, _ := t.entries.LoadOrStore(key, new(entry))
	return e.(*entry)
}

// allow also returns the monotonic time an admission counts at.
func (t *TwoTier) allow(ctx context.Context, key string, n int64) (result, int64, error) {
	switch {
	case t == nil || t.r == nil:
		return zeroResult, 0, errZeroValue
	case n < 0:
		return result{RetryAfter: never}, 0, errNegativeCost
	case n > t.r.max:
		return result{RetryAfter: never}, 0, errCostExceedsBurst
	}
	e := t.entry(key)
	if n == 0 {
		now := monotonic()
		return result{OK: true, Remaining: e.pooled(now)}, now, nil
	}
	if r, at, ok := e.spend(n); ok {
		return r, at, nil
	}
	return t.slow(ctx, e, key, n)
}

// spend takes n units from the pool if it holds n in a live lease.
func (e *entry) spend(n int64) (result, int64, bool) {
	for {
		w := e.word.Load()
		tok := int64(w & tokMask)
		if tok < n {
			return result{}, 0, false
		}
		if !e.word.CompareAndSwap(w, w-uint64(n)) {
			continue
		}
		// The units are ours; they count at a time read after taking them,
		// which must be before the lease's end.
		now := monotonic()
		if now < int64(w>>tokBits)*1e6 {
			return result{OK: true, Remaining: tok - n}, now, true
		}
		// The lease ran out: the units are void. Put them back if nothing
		// changed (a new lease may have replaced the pool: then they are
		// lost), for the next borrow to give back to Redis.
		e.word.CompareAndSwap(w-uint64(n), w)
		return result{}, 0, false
	}
}

// pooled returns the units in the pool that may be spent at now: none once
// their lease has ended (they are void, kept only to be given back).
func (e *entry) pooled(now int64) int64 {
	w := e.word.Load()
	if now >= int64(w>>tokBits)*1e6 {
		return 0
	}
	return int64(w & tokMask)
}

// add puts m units of a lease ending at deadline (monotonic ns) in the
// pool. Units left of a live lease keep the earlier deadline for all; units
// past what the word holds are lost (a carry would move the deadline).
func (e *entry) add(m, deadline int64) {
	dl := uint64(deadline / 1e6)
	for {
		w := e.word.Load()
		tok, old := w&tokMask, w>>tokBits
		next := dl<<tokBits | uint64(m)
		if tok != 0 && int64(old)*1e6 > monotonic() {
			next = min(old, dl)<<tokBits | min(tok+uint64(m), tokMask)
		}
		if e.word.CompareAndSwap(w, next) {
			return
		}
	}
}

func (t *TwoTier) slow(ctx context.Context, e *entry, key string, n int64) (result, int64, error) {
	now := monotonic()
	if until := e.denyUntil.Load(); now < until {
		return result{RetryAfter: time.Duration(until - now)}, 0, nil
	}
	h := t.nodes.of(ctx, t.r.c, t.r.keyOf(key))
	if now < h.downUntil.Load() && !e.reserving.Load() {
		return t.fallback(e, h, now, n, ErrUnavailable)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if t.closed.Load() {
		return zeroResult, 0, ErrClosed
	}
	// Another caller may have borrowed while this one waited, or units
	// reserved may be there.
	now = monotonic()
	t.release(e, now)
	if r, at, ok := e.spend(n); ok {
		return r, at, nil
	}
	now = monotonic()
	if e.res.out < e.res.n {
		return t.awaiting(e, now, n), 0, nil
	}
	if until := e.denyUntil.Load(); now < until {
		return result{RetryAfter: time.Duration(until - now)}, 0, nil
	}
	if now < h.downUntil.Load() {
		return t.fallback(e, h, now, n, ErrUnavailable)
	}
	return t.roundTrip(ctx, e, h, key, n, now)
}

// roundTrip borrows for key (under e.mu) and decides the request from
// what comes back, counting the node's failures.
func (t *TwoTier) roundTrip(ctx context.Context, e *entry, h *health, key string, n, now int64) (result, int64, error) {
	if t.trips.Add(1)%sweepEvery == 0 {
		t.sweep(now)
	}
	rt := t.rate.Load()
	want, reserve := t.sizes(e, h, rt, now, n)
	give := e.reclaim(now)
	r, m, err := t.borrow(ctx, e, key, rt, want, reserve, give)
	if err != nil {
		t.errs.Add(1)
		now = monotonic()
		if h.failing.Add(1) >= tripAfter {
			h.downUntil.Store(now + t.retry)
		}
		return t.fallback(e, h, now, n, err)
	}
	h.failing.Store(0)
	e.at, e.got = now, m
	return t.received(e, rt, r, m, n, now)
}

// sizes returns how many units to borrow if the key has them, and how
// many to reserve if it is empty: no more than the rate refills in half a
// lease, so that one process holds the line for no longer, and at least 2
// (within the batch), so that a round trip brings two. After the node
// failed, only the request's: a borrow whose reply is lost takes units no
// one spends.
func (t *TwoTier) sizes(e *entry, h *health, rt *tierRate, now, n int64) (want, reserve int64) {
	if h.failing.Load() > 0 {
		return n, n
	}
	want = e.resize(now, rt.lease, t.batch)
	reserve = min(max(2, min(want, rt.half)), t.batch)
	return max(want, n), max(reserve, n)
}

// borrow asks Redis for up to want units, or if none is there for up to
// reserve units to come, giving back give units of the last borrow, and
// keeps the receipt of this one.
func (t *TwoTier) borrow(ctx context.Context, e *entry, key string, rt *tierRate, want, reserve, give int64) (result, int64, error) {
	r, m, written, err := t.r.decide(ctx, key, rt.prog, false, 0, want, true, true, give, reserve, e.last)
	if give > 0 || err != nil {
		e.lastM = 0 // given back, or lost: never twice
	}
	if written != "" {
		e.last, e.prog = written, rt.prog
	}
	if m > 0 {
		e.lastM = m
	}
	return r, m, err
}

// received puts the m units borrowed at ls in the pool, or holds them as a
// reservation when Redis admitted them at times to come (RetryAfter is then
// the wait for the first), and decides the request from them. A borrow
// finds none only when the line of reservations is two Redis bursts long:
// a denial is then kept until its next unit could be there, later when
// other processes compete for the units: zeros counts the borrows that
// found none (halved by each borrow that found some), each standing for a
// process that takes a unit before this one.
func (t *TwoTier) received(e *entry, rt *tierRate, r result, m, n, ls int64) (result, int64, error) {
	now := monotonic()
	if m == 0 {
		e.zeros = min(e.zeros+1, t.r.max)
		wait := satAdd(int64(r.RetryAfter), rt.refill(e.zeros-1))
		e.denyUntil.Store(satAdd(now, wait))
		return result{Remaining: e.pooled(now), RetryAfter: time.Duration(wait)}, 0, nil
	}
	e.zeros /= 2
	if w := int64(r.RetryAfter); w > 0 {
		// Redis decided at a time in [ls, now] here: the first unit is
		// there by now+w and its lease runs from ls+w at the earliest.
		e.res = reservation{n: m, base: satAdd(now, w), end: satAdd(ls+w, rt.lease), rate: rt}
		e.reserving.Store(true)
		t.release(e, now)
		return t.awaiting(e, now, n), 0, nil
	}
	e.add(m, ls+rt.lease)
	if cur := t.rate.Load(); cur != rt {
		// A SetRate ran during the round trip and may have passed this
		// entry before the units were in: cut their lease as it would have.
		e.shorten(rt, cur, now)
	}
	if r, at, ok := e.spend(n); ok {
		return r, at, nil
	}
	tok := e.pooled(now)
	return result{Remaining: tok, RetryAfter: time.Duration(rt.refill(max(1, n-tok)))}, 0, nil
}

// release puts in the pool the reserved units whose times have come, each
// with the end of its own lease (the pool keeps the earliest end of those
// it holds), and keeps a denial until the next one's time. Units whose
// lease has ended go in at once: void, for reclaim to give back.
func (t *TwoTier) release(e *entry, now int64) {
	rs := &e.res
	if rs.out < rs.n && rs.rate != t.rate.Load() {
		// The rate changed: the units still to come are void (see SetRate).
		rs.out = rs.n
		e.denyUntil.Store(0)
	}
	for rs.out < rs.n {
		at := satAdd(rs.base, rs.rate.refill(rs.out))
		end := satAdd(rs.end, rs.rate.refill(rs.out)) - 1
		if now < at && now < end {
			e.denyUntil.Store(at)
			return
		}
		// The units due by now, at least this one, at most all.
		k := min(rs.n-rs.out, 1+rs.rate.units(now-at))
		e.add(k, end)
		rs.out += k
	}
	e.reserving.Store(false)
}

// awaiting is the denial of a request for n units while a reservation's
// units are still to come: the wait is until n could be in the pool.
func (t *TwoTier) awaiting(e *entry, now, n int64) result {
	tok := e.pooled(now)
	i := min(e.res.out+max(0, n-tok), e.res.n) - 1
	wait := max(1, satAdd(e.res.base, e.res.rate.refill(max(i, e.res.out)))-now)
	return result{Remaining: tok, RetryAfter: time.Duration(wait)}
}

// resize returns how many units to borrow: what this process spent per
// half lease since its last borrow (at least 1, at most limit). A pool
// that ran dry early grows the next borrow; a process that spent little
// of it, or came back late, shrinks it; a borrow at most doubles the one
// before. Half a lease leaves the other half
// for the spending rate to vary before units are void.
func (e *entry) resize(now, lease, limit int64) int64 {
	if e.got == 0 || now <= e.at {
		return max(1, e.size)
	}
	spent := max(0, e.got-int64(e.word.Load()&tokMask))
	size := math.Ceil(float64(spent) * float64(lease/2) / float64(now-e.at))
	// At most double: a burst of requests is not a rate.
	e.size = int64(max(1, min(size, float64(2*e.got), float64(limit))))
	return e.size
}

// reclaim empties a pool whose lease has ended and returns the units of
// the last borrow in it, to give back with the next round trip: none can
// be spent any more (a unit taken now counts at a clock read later, past
// the lease), and none goes back twice.
func (e *entry) reclaim(now int64) int64 {
	for e.lastM > 0 {
		w := e.word.Load()
		tok := int64(w & tokMask)
		if tok == 0 || int64(w>>tokBits)*1e6 > now {
			return 0
		}
		if e.word.CompareAndSwap(w, 0) {
			return min(tok, e.lastM)
		}
	}
	return 0
}

// satAdd returns a+b for a, b >= 0, at most the largest int64.
func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// units returns how many whole units the rate refills in d ns (d >= 0).
func (rt *tierRate) units(d int64) int64 {
	if d <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(d), uint64(rt.events))
	if hi >= uint64(rt.period) {
		return math.MaxInt64
	}
	q, _ := bits.Div64(hi, lo, uint64(rt.period))
	return int64(min(q, math.MaxInt64))
}

// refill returns the ns the rate takes to refill k units, rounded up.
func (rt *tierRate) refill(k int64) int64 {
	hi, lo := bits.Mul64(uint64(k), uint64(rt.period))
	if hi >= uint64(rt.events) {
		return int64(never)
	}
	q, r := bits.Div64(hi, lo, uint64(rt.events))
	if r != 0 {
		q++
	}
	return int64(min(q, uint64(never)))
}

// sweepEvery is how many round trips pass between sweeps of idle keys.
const sweepEvery = 1024

// sweep drops the entries of keys that hold nothing a decision would use
// (no live units, no denial cached, no borrow under way), at most once a
// second, so a process's memory follows its active keys. A caller that
// still holds a dropped entry may borrow into it: the units it does not
// spend are lost, never spent twice.
func (t *TwoTier) sweep(now int64) {
	if now-t.swept.Load() < int64(time.Second) || !t.sweeping.TryLock() {
		return
	}
	defer t.sweeping.Unlock()
	t.swept.Store(now)
	t.entries.Range(func(k, v any) bool {
		if e := v.(*entry); e.idle(now) && e.mu.TryLock() {
			if !e.reserving.Load() {
				t.entries.Delete(k)
			}
			e.mu.Unlock()
		}
		return true
	})
	// Nodes gone from the slot map (failed over, resharded away) leave too;
	// a caller still holding one's health counts on a fresh one next time.
	t.nodes.all.Range(func(k, v any) bool {
		if h := v.(*health); h.failing.Load() == 0 && h.downUntil.Load() <= now {
			t.nodes.all.Delete(k)
		}
		return true
	})
}

// idle reports whether e holds no live units and no cached denial.
func (e *entry) idle(now int64) bool {
	w := e.word.Load()
	return (w&tokMask == 0 || int64(w>>tokBits)*1e6 <= now) && e.denyUntil.Load() <= now
}

// follow sets the fail-open limit fb to its share of rt at now, unless it
// has it.
func (t *TwoTier) follow(fb *localLimiter, rt *tierRate, now int64) error {
	if old := fb.rate.Load(); old != rt && fb.rate.CompareAndSwap(old, rt) {
		ev := max(1, int64(float64(rt.events)*t.share))
		return localSetRate(fb, now, float64(ev)*1e9/float64(rt.period))
	}
	return nil
}

// fallback decides while Redis fails: deny with err (fail closed), or on
// the local limit.
func (t *TwoTier) fallback(e *entry, h *health, now, n int64, err error) (result, int64, error) {
	if t.share == 0 {
		return result{RetryAfter: time.Duration(max(1, h.downUntil.Load()-now))}, 0, err
	}
	rt := t.rate.Load()
	fb := e.fb.Load()
	if fb == nil {
		ev := max(1, int64(float64(rt.events)*t.share))
		b := max(1, int64(float64(t.burst)*t.share))
		l, lerr := newLocalLimiter(ev, rt.period, b)
		if lerr != nil {
			return result{}, 0, lerr
		}
		l.rate.Store(rt)
		if !e.fb.CompareAndSwap(nil, l) {
			l = e.fb.Load()
		}
		fb = l
	}
	if err := t.follow(fb, rt, now); err != nil {
		return result{}, 0, err
	}
	t.fallbacks.Add(1)
	if n > localBurst(fb) {
		return result{RetryAfter: never}, 0, nil
	}
	r, ferr := localAllow(fb, now, n)
	return r, now, ferr
}
