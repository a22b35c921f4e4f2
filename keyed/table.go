package keyed

import (
	"errors"
	"hash/maphash"
	"math"
	"math/bits"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/cellrate/cellrate/atomic128"
	"github.com/cellrate/cellrate/internal/backoff"
	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/nanotime"
	"github.com/cellrate/cellrate/striped"
)

// ErrFull reports a new key refused because its group held no idle slot,
// under the Refuse policy. The Result's RetryAfter says when a slot of the
// group becomes idle if nothing else is admitted meanwhile.
var ErrFull = errors.New("keyed: no idle slot for a new key")

// Policy is what a new key does when every slot of its group holds a key
// that is not idle.
type Policy int

const (
	// EvictLeastLoss takes the slot whose key loses least (the bucket
	// closest to full, the window counting least) and counts what it
	// forgave in Stats.
	EvictLeastLoss Policy = iota
	// Refuse denies the new key (fails closed) with ErrFull.
	Refuse
)

// DefaultCapacity is the number of slots of a table made without
// WithCapacity or WithMemory.
const DefaultCapacity = 1 << 16

// SlotBytes is the memory a slot takes: 16 bytes of tag and state, and its
// share of its group's 8-byte mark.
const SlotBytes = 18

// groupSlots is the number of slots in a group: one 64-byte cache line.
const groupSlots = 4

// pending marks the tag of a slot claimed for a key that is not yet
// settled (see settle). Tags of keys never have it.
const pending = 1 << 63

// Option configures a Table.
type Option func(*config)

type config struct {
	slots    int64
	slotsErr *limit.ParamError
	policy   Policy
	clock    nanotime.Clock
	v6bits   int
}

// WithCapacity sets the number of slots, which is the most keys the table
// holds at once: at least 4, at most 2^40 (2^24 on 32-bit targets),
// rounded up to a multiple of 4.
func WithCapacity(keys int) Option {
	return func(c *config) {
		c.slots, c.slotsErr = int64(keys), nil
		if keys < groupSlots || int64(keys) > maxSlots {
			c.slotsErr = &limit.ParamError{Pkg: "keyed", Param: "capacity", Value: keys, Min: groupSlots, Max: maxSlots}
		}
	}
}

// WithMemory sets the number of slots from a budget of bytes: the most
// whole groups of 4 slots that bytes holds at SlotBytes a slot (the table
// takes at most 64 bytes more, for alignment).
func WithMemory(bytes int64) Option {
	return func(c *config) {
		c.slots, c.slotsErr = bytes/SlotBytes/groupSlots*groupSlots, nil
		if c.slots < groupSlots || c.slots > maxSlots {
			c.slotsErr = &limit.ParamError{Pkg: "keyed", Param: "memory", Value: bytes,
				Min: int64(groupSlots * SlotBytes), Max: int64(maxSlots * SlotBytes)}
		}
	}
}

// maxSlots is the most slots a table takes: 2^40 (18 TiB), or 2^24 on
// 32-bit targets.
const maxSlots = 1 << (24 + 16*(^uint(0)>>63))

// WithPolicy sets what a new key does when its group holds no idle slot
// (default EvictLeastLoss).
func WithPolicy(p Policy) Option { return func(c *config) { c.policy = p } }

// WithClock makes the plain (non-At) methods read clock instead of
// nanotime.Now: for example nanotime.Since(), which follows
// testing/synctest's fake time.
func WithClock(clock nanotime.Clock) Option { return func(c *config) { c.clock = clock } }

// WithIPv6Prefix sets how many leading bits of an IPv6 address name its
// client in the Addr methods, in [1, 128] (default 64: one client owns a
// /64).
func WithIPv6Prefix(bits int) Option { return func(c *config) { c.v6bits = bits } }

// Table is a fixed-size, lock-free table of per-key limiters, all with the
// parameters given to New or NewWindow. Its methods are safe for concurrent
// use. A Table must not be copied.
type Table struct {
	k      *kind
	seed   maphash.Seed
	clock  nanotime.Clock
	policy Policy
	v6bits int
	groups uint64
	slots  []slot          // groups*4 slots, each group on one cache line
	marks  []atomic.Uint64 // per group: no new key starts before it (see settle, markAt)

	// evicted, if set (by tests), is told the tag and loss of each key a
	// lossy eviction takes a slot from.
	evicted func(tag, loss uint64)
	// claiming, if set (by tests), runs before each claim's compare-and-swap.
	claiming func()

	admitted, denied, reuses, evictions, forgiven, refusals, claims, releases striped.Counter
}

// slot is a key's tag and its limiter's state word, one atomic128 pair.
type slot = [2]uint64

// New returns a table of token buckets, each refilled with events tokens
// per period and holding up to burst (package packed64's 64-bit bucket:
// burst at most 32767, a token taking at least 256ns to refill).
func New(events int64, period time.Duration, burst int64, opts ...Option) (*Table, error) {
	switch {
	case period < 1:
		return nil, &limit.ParamError{Pkg: "keyed", Param: "period", Value: period, Min: time.Duration(1)}
	case events < 1 || events > int64(period)/minToken:
		e := &limit.ParamError{Pkg: "keyed", Param: "events", Value: events, Min: int64(1), Max: int64(period) / minToken,
			Reason: "a token must take at least 256ns to refill"}
		if int64(period) < minToken {
			e.Max = nil
		}
		return nil, e
	case burst < 1 || burst > maxBurst:
		return nil, &limit.ParamError{Pkg: "keyed", Param: "burst", Value: burst, Min: int64(1), Max: int64(maxBurst)}
	}
	k, err := newBucketKind(events, period, burst)
	if err != nil {
		return nil, err // not reached: the bounds above are packed64's
	}
	return newTable(k, opts)
}

// NewWindow returns a table of sliding-window counters, each admitting
// limit units per window (package packed64's 64-bit window: limit at most
// 262143, window at most 2^62ns).
func NewWindow(lim int64, window time.Duration, opts ...Option) (*Table, error) {
	switch {
	case lim < 1 || lim > maxLimit:
		return nil, &limit.ParamError{Pkg: "keyed", Param: "limit", Value: lim, Min: int64(1), Max: int64(maxLimit)}
	case window < 1 || window > maxWindow:
		return nil, &limit.ParamError{Pkg: "keyed", Param: "window", Value: window, Min: time.Duration(1), Max: maxWindow}
	}
	k, err := newWindowKind(lim, window)
	if err != nil {
		return nil, err // not reached: the bounds above are packed64's
	}
	return newTable(k, opts)
}

func newTable(k *kind, opts []Option) (*Table, error) {
	c := config{slots: DefaultCapacity, clock: nanotime.Now, v6bits: 64}
	for _, o := range opts {
		o(&c)
	}
	switch {
	case c.slotsErr != nil:
		return nil, c.slotsErr
	case c.clock == nil:
		return nil, &limit.ParamError{Pkg: "keyed", Param: "clock", Value: c.clock, Reason: "the clock must not be nil"}
	case c.policy != EvictLeastLoss && c.policy != Refuse:
		return nil, &limit.ParamError{Pkg: "keyed", Param: "policy", Value: c.policy, Min: EvictLeastLoss, Max: Refuse}
	case c.v6bits < 1 || c.v6bits > 128:
		return nil, &limit.ParamError{Pkg: "keyed", Param: "ipv6 prefix", Value: c.v6bits, Min: 1, Max: 128}
	}
	groups := (uint64(c.slots) + groupSlots - 1) / groupSlots
	return &Table{k: k, seed: maphash.MakeSeed(), clock: c.clock, policy: c.policy, v6bits: c.v6bits,
		groups: groups, slots: alignedSlots(groups * groupSlots), marks: make([]atomic.Uint64, groups)}, nil
}

// alignedSlots returns n zero slots starting on a 64-byte boundary, in
// memory holding no pointers (the garbage collector never scans it).
func alignedSlots(n uint64) []slot {
	raw := make([]uint64, 2*n+7)
	off := (64 - uintptr(unsafe.Pointer(&raw[0]))%64) % 64 / 8
	return unsafe.Slice((*slot)(unsafe.Pointer(&raw[off])), n)
}

// Capacity returns the number of slots: the most keys the table holds.
func (t *Table) Capacity() int { return len(t.slots) }

// Burst returns the most units one request may take: the bucket's burst
// or the window's limit.
func (t *Table) Burst() int64 { return t.k.burst() }

// Stats are a table's counts since New. Read while decisions run, each
// count is read separately (striped.Counter's Load), so they add up only
// once the decisions they count have returned.
type Stats struct {
	// Keys is the number of slots holding a key, idle or not (at most
	// Capacity).
	Keys int64
	// Reuses counts new keys placed in a slot whose key was idle: no loss.
	Reuses int64
	// Evictions counts new keys placed in a slot whose key was not idle
	// (EvictLeastLoss), and Forgiven what those keys lost: tokens a bucket
	// lacked (rounded up), units a window counted. Each is the most its key
	// may be admitted beyond its own limiter's bound because of that
	// eviction.
	Evictions, Forgiven int64
	// Refusals counts new keys denied for want of an idle slot (Refuse).
	Refusals int64
	// Admitted and Denied count decisions (refusals among the denied).
	Admitted, Denied int64
}

// Stats returns the table's counts.
func (t *Table) Stats() Stats {
	return Stats{
		Keys:      t.claims.Load() - t.releases.Load(),
		Reuses:    t.reuses.Load(),
		Evictions: t.evictions.Load(),
		Forgiven:  t.forgiven.Load(),
		Refusals:  t.refusals.Load(),
		Admitted:  t.admitted.Load(),
		Denied:    t.denied.Load(),
	}
}

// group returns the index of the first group of hash h, from its high
// bits.
func (t *Table) group(h uint64) uint64 {
	g, _ := bits.Mul64(h, t.groups)
	return g
}

// group2 returns the index of the second group of hash h, from its low
// bits, never the first unless the table has one group.
func (t *Table) group2(h, g uint64) uint64 {
	g2, _ := bits.Mul64(bits.RotateLeft64(h, 32), t.groups)
	if g2 == g {
		g2 = (g + 1) % t.groups
	}
	return g2
}

// tagOf returns the tag of hash h: never 0 (an empty slot) nor pending.
func tagOf(h uint64) uint64 {
	if tag := h &^ pending; tag != 0 {
		return tag
	}
	return 1
}

// probe is the slots a key may be in: its first group's, then its second
// group's (the same group, when the table has only one).
type probe struct {
	t      *Table
	g1, g2 uint64
	tag    uint64
	s      [2 * groupSlots]*slot

	// settled and word are the index of the slot settle wrote the key's
	// first state to, and that state (for a Receipt; see take).
	settled uint64
	word    uint64
}

func (t *Table) probe(h uint64) probe {
	g1 := t.group(h)
	p := probe{t: t, g1: g1, g2: t.group2(h, g1), tag: tagOf(h)}
	a, b := (*[groupSlots]slot)(t.slots[p.g1*groupSlots:]), (*[groupSlots]slot)(t.slots[p.g2*groupSlots:])
	for i := range groupSlots {
		p.s[i], p.s[groupSlots+i] = &a[i], &b[i]
	}
	return p
}

// groupOf returns the group of the i-th slot of p.
func (p *probe) groupOf(i int) uint64 {
	if i < groupSlots {
		return p.g1
	}
	return p.g2
}

// floor returns the time before which a key new to p's groups admits
// nothing: the later of their marks.
func (p *probe) floor() int64 { return max(p.t.mark(p.g1), p.t.mark(p.g2)) }

// allow1 decides one unit for the key hashing to h. Its fast path is a
// key with a state in one of its groups, decided by one attempt of the
// cell's load, step and compare-and-swap (the same step as decide's);
// everything else goes to decide.
func (t *Table) allow1(h uint64, now int64) bool {
	tag := tagOf(h)
	g := t.group(h)
	for range 2 {
		grp := (*[groupSlots]slot)(t.slots[g*groupSlots:])
		// Which slots hold the tag, without a branch a slot: a key's slot
		// is anywhere in its group, and a branch on each would mispredict.
		m := b2u(atomic128.LoadFirstAligned(&grp[0]) == tag) |
			b2u(atomic128.LoadFirstAligned(&grp[1]) == tag)<<1 |
			b2u(atomic128.LoadFirstAligned(&grp[2]) == tag)<<2 |
			b2u(atomic128.LoadFirstAligned(&grp[3]) == tag)<<3
		if m != 0 {
			p := &grp[bits.TrailingZeros(m)&(groupSlots-1)]
			tg, w := atomic128.LoadAligned(p)
			if tg != tag || w == 0 {
				break
			}
			ref := t.k.ref()
			next, ok := t.k.stepOne(w, now, ref)
			if !ok {
				t.denied.Add(1)
				return false
			}
			t.k.raise(now, ref)
			if atomic128.CompareAndSwapAligned(p, tag, w, tag, next) {
				t.admitted.Add(1)
				return true
			}
			break
		}
		g = t.group2(h, g)
	}
	r, _ := t.decide(h, now, 1, true)
	return r.OK
}

// b2u is 1 for true, 0 for false (a flag, not a branch).
func b2u(b bool) uint {
	if b {
		return 1
	}
	return 0
}

// decide runs one decision for the key hashing to h and counts it. With
// one (n = 1), only the Result's OK is set.
func (t *Table) decide(h uint64, now, n int64, one bool) (limit.Result, error) {
	return t.count(t.look(h, now, n, one))
}

// look is decide without counting the decision.
func (t *Table) look(h uint64, now, n int64, one bool) (limit.Result, error) {
	if n < 0 {
		return limit.Result{RetryAfter: limit.Never}, limit.ErrNegativeCost
	}
	if n > t.k.burst() {
		return limit.Result{RetryAfter: limit.Never}, limit.ErrCostExceedsBurst
	}
	tag := tagOf(h)
	g1 := t.group(h)
	grp := (*[groupSlots]slot)(t.slots[g1*groupSlots:])
	var spin backoff.Spin
	for ; ; spin.Wait() {
		// The common case: the key is in its first group's line.
		for i := range grp {
			if atomic128.LoadFirstAligned(&grp[i]) != tag {
				continue
			}
			if tg, w := atomic128.LoadAligned(&grp[i]); tg == tag {
				if r, _, err, done := t.run(&grp[i], tag, w, now, n, h, one); done {
					return r, err
				}
				goto again
			}
		}
		{
			p := t.probe(h)
			for i := groupSlots; i < len(p.s); i++ {
				if atomic128.LoadFirstAligned(p.s[i]) != tag {
					continue
				}
				if tg, w := atomic128.LoadAligned(p.s[i]); tg == tag {
					if r, _, err, done := t.run(p.s[i], tag, w, now, n, h, one); done {
						return r, err
					}
					goto again
				}
			}
			if r, err, done := t.insert(&p, now, n); done {
				return r, err
			}
		}
	again:
	}
}

// run decides on slot s of the key hashing to h, which held tag and w,
// and returns the word it wrote (w if none); done is false if the slot
// changed meanwhile. A word never written (0) is a fresh limiter, not
// admitting before its groups' marks.
func (t *Table) run(s *slot, tag, w uint64, now, n int64, h uint64, one bool) (limit.Result, uint64, error, bool) {
	if w == 0 {
		g := t.group(h)
		if m := max(t.mark(g), t.mark(t.group2(h, g))); now < m {
			return notBefore(m, now, n), w, nil, true
		}
	}
	var next uint64
	var r limit.Result
	var err error
	var write bool
	ref := t.k.ref()
	if one {
		next, r.OK = t.k.stepOne(w, now, ref)
		write = r.OK
	} else {
		next, r, write, err = t.k.step(w, now, ref, n)
	}
	if !write {
		return r, w, err, true
	}
	t.k.raise(now, ref)
	return r, next, nil, atomic128.CompareAndSwapAligned(s, tag, w, tag, next)
}

// mark returns group g's mark. A mark is kept as its int64 value with the
// sign bit flipped, so a zero word (as make leaves it) is math.MinInt64 and
// unsigned order is signed order.
func (t *Table) mark(g uint64) int64 { return int64(t.marks[g].Load() ^ pending) }

// raiseMark makes group g's mark at least m.
func (t *Table) raiseMark(g uint64, m int64) {
	x := &t.marks[g]
	for {
		old := x.Load()
		if uint64(m)^pending <= old || x.CompareAndSwap(old, uint64(m)^pending) {
			return
		}
	}
}

// notBefore is the decision on a key new to its groups at a now before
// their mark m: denied (n = 0 admitted), until m.
func notBefore(m, now, n int64) limit.Result {
	if n == 0 {
		return limit.Result{OK: true}
	}
	return limit.Result{RetryAfter: time.Duration(until(m, now))}
}

// until returns at - now, for at after now, saturated at limit.Never.
func until(at, now int64) int64 {
	return int64(min(uint64(at)-uint64(now), uint64(limit.Never)))
}

func (t *Table) count(r limit.Result, err error) (limit.Result, error) {
	if r.OK {
		t.admitted.Add(1)
	} else {
		t.denied.Add(1)
	}
	return r, err
}

// insert places a key found in no slot of its groups: it settles a
// pending claim of the key if there is one, or claims a slot and settles
// it. It reports done = false when a slot changed under it and the caller
// must look again.
//
// Claiming is two compare-and-swaps so that a key is never in two slots
// with admissions in both: a claim writes the key's tag marked pending and
// no state, then settle makes sure no other slot holds the key (removing
// other pending claims of it after its own, giving its own up for one
// before it or a settled one) before it writes the first state. Any caller
// with the key may settle any of its pending claims, so none waits for
// another.
func (t *Table) insert(p *probe, now, n int64) (limit.Result, error, bool) {
	var tags, words [2 * groupSlots]uint64
	for i, s := range p.s {
		tags[i], words[i] = atomic128.LoadAligned(s)
	}
	for i := range p.s {
		switch tags[i] {
		case p.tag:
			return limit.Result{}, nil, false // settled meanwhile
		case p.tag | pending:
			return t.settle(p, i, now, n)
		}
	}
	if n == 0 {
		// A query: answered as for a fresh limiter, claiming nothing.
		if m := p.floor(); now < m {
			return notBefore(m, now, n), nil, true
		}
		_, r, _, _ := t.k.step(0, now, 0, 0)
		return r, nil, true
	}
	// The victim: an empty slot, else an idle one, from the group with
	// more of them (so groups fill evenly), else (EvictLeastLoss) the slot
	// whose key loses least; the first of equals.
	const (
		none = iota
		lossy
		idle
		empty
	)
	ref := t.k.ref()
	var classes [2 * groupSlots]int
	var idles [2 * groupSlots]int64
	var free [2]int
	for i := range p.s {
		switch {
		case tags[i]&pending != 0:
			classes[i] = none // another key's claim, about to settle
		case tags[i] == 0:
			classes[i] = empty
		default:
			idles[i] = t.k.idle(words[i], ref)
			classes[i] = lossy
			if now >= idles[i] && idles[i] != math.MaxInt64 {
				classes[i] = idle
			}
		}
		if classes[i] >= idle {
			free[i/groupSlots]++
		}
	}
	victim, class, loss, mark := 0, none, uint64(0), int64(never)
	retry, held := int64(limit.Never), false
	for i := range p.s {
		c := classes[i]
		switch {
		case c == lossy:
			retry, held = min(retry, until(idles[i], now)), true
			if t.policy == EvictLeastLoss && class <= lossy {
				if l := t.k.loss(words[i], now, ref); class == none || l < loss {
					victim, class, loss, mark = i, lossy, l, now
				}
			}
		case c > class || c == class && c >= idle && free[i/groupSlots] > free[victim/groupSlots]:
			victim, class, mark = i, c, idles[i]
			if c == empty {
				mark = never
			}
		}
	}
	switch {
	case class == none && !held:
		return limit.Result{}, nil, false // every slot is a pending claim
	case class == none:
		t.refusals.Add(1)
		return limit.Result{RetryAfter: time.Duration(retry)}, ErrFull, true
	}
	// No key new to the group may start before the victim's key could
	// (see settle).
	t.raiseMark(p.groupOf(victim), mark)
	if t.claiming != nil {
		t.claiming()
	}
	if !atomic128.CompareAndSwapAligned(p.s[victim], tags[victim], words[victim], p.tag|pending, 0) {
		return limit.Result{}, nil, false
	}
	switch class {
	case empty:
		t.claims.Add(1)
	case lossy:
		t.evictions.Add(1)
		t.forgiven.Add(int64(min(loss, 1<<62)))
		if t.evicted != nil {
			t.evicted(tags[victim], loss)
		}
	default:
		t.reuses.Add(1)
	}
	return t.settle(p, victim, now, n)
}

// settle turns the pending claim of the key in slot i of p into the key's
// slot with its first decision, unless another slot holds the key.
//
// The groups' marks are why a key's bound survives losing its slot: when
// a slot is taken from a key, its group's mark is raised to the time from
// which that key's state was idle (or to the taker's now, if it was not:
// what the key lacked then is forgiven), and a key that starts in a fresh
// state does not admit before the marks of its groups, one of which held
// its old slot. So the admissions of a key's old state and of its new one
// never overlap in time further than what was forgiven.
func (t *Table) settle(p *probe, i int, now, n int64) (limit.Result, error, bool) {
	tag := p.tag
	for j, s := range p.s {
		if j == i || s == p.s[i] {
			continue
		}
		tg, w := atomic128.LoadAligned(s)
		switch {
		case tg == tag|pending && j > i:
			// A later claim of the key: remove it, so that its settle
			// cannot succeed too.
			if atomic128.CompareAndSwapAligned(s, tg, w, 0, 0) {
				t.releases.Add(1)
				continue
			}
			fallthrough // it settled (or went): give this claim up
		case tg == tag || tg == tag|pending:
			// The key has a slot, or an earlier claim: give this one up.
			if atomic128.CompareAndSwapAligned(p.s[i], tag|pending, 0, 0, 0) {
				t.releases.Add(1)
			}
			return limit.Result{}, nil, false
		}
	}
	var next uint64
	var r limit.Result
	if m := p.floor(); now < m {
		r = notBefore(m, now, n)
	} else {
		ref := t.k.ref()
		next, r, _, _ = t.k.step(0, now, ref, n) // n is in range
		if next != 0 {
			t.k.raise(now, ref)
		}
	}
	if !atomic128.CompareAndSwapAligned(p.s[i], tag|pending, 0, tag, next) {
		return limit.Result{}, nil, false
	}
	p.settled, p.word = p.groupOf(i)*groupSlots+uint64(i%groupSlots), next
	return r, nil, true
}
