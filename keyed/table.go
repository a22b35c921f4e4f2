package keyed

import (
	"errors"
	"fmt"
	"hash/maphash"
	"math/bits"
	"runtime/debug"
	"time"
	"unsafe"

	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/nanotime"
	"github.com/cellrate/cellrate/striped"
)

// ErrFull reports a key refused for want of a slot: under WithRefuse, a
// new key whose groups hold no idle slot (the Result's RetryAfter
// says when one becomes idle if nothing else is admitted meanwhile); and
// any key of the zero Table, which has no slots (RetryAfter limit.Never).
var ErrFull = errors.New("keyed: no idle slot for a new key")

// policy is what a new key does when every slot of its two groups holds a
// key that owes something (a bucket not full, a window counting) or did in
// the last 10ms.
type policy int

const (
	// evict takes the slot of the key that owes most and keeps what it
	// owes in the table's sketch (the default; see WithRefuse).
	evict policy = iota
	// refuse denies the new key with ErrFull (WithRefuse).
	refuse
)

// defaultCapacity is the number of slots of a table made without
// WithCapacity.
const defaultCapacity = 1 << 16

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
	policy   policy
	clock    nanotime.Clock
	clockSet bool
	v6bits   int
}

// WithCapacity sets the number of slots, which is the most keys the table
// holds at once: at least 4, at most 2^32 (2^24 on 32-bit targets),
// rounded up to a multiple of 4. The default is 65,536. New takes the
// table's memory at once, 24 bytes a slot, and refuses a capacity whose
// table would pass the Go memory limit (GOMEMLIMIT, debug.SetMemoryLimit);
// with no limit set, a table larger than the machine can hold ends the
// process, as any allocation that large does.
func WithCapacity(keys int) Option {
	return func(c *config) {
		c.slots, c.slotsErr = int64(keys), nil
		if keys < groupSlots || int64(keys) > maxSlots {
			c.slotsErr = &limit.ParamError{Pkg: "keyed", Param: "capacity", Value: keys, Min: groupSlots, Max: maxSlots}
		}
	}
}

// maxSlots is the most slots a table takes: 2^32, or 2^24 on 32-bit
// targets.
const maxSlots = 1 << (24 + 8*(^uint(0)>>63))

// slotBytes is a slot's memory: its tag and state, and its sketch register.
const slotBytes = int64(unsafe.Sizeof(slot{})) + 8

// WithRefuse makes a new key whose groups hold no idle slot (every slot's
// key owes something, or did in the last 10ms) be denied with ErrFull
// (fail closed), taking nothing. Its cost: a well-behaved key whose slot was
// reused while it was idle comes back as a new key and is denied while its
// groups are busy, so a flood of other keys can deny it for as long as it
// lasts.
//
// By default such a key evicts instead: it takes the slot of the key that
// owes most and keeps what that key owes in the table's sketch, so its bound
// stays exact. The cost falls on innocent keys: a key whose registers both
// hold other evicted keys' debts starts owing the least of them, and is
// delayed until it is paid (measured in the README's "keyed under attack").
func WithRefuse() Option { return func(c *config) { c.policy = refuse } }

// WithClock makes the plain (non-At) methods read clock instead of
// nanotime.Now: for example nanotime.Since(), which follows
// testing/synctest's fake time, or the Now of a nanotime.Coarse, which
// saves the clock read of each decision. Each key's bound holds over the
// times the clock returns. A coarse clock lags nanotime.Now by up to a lag
// L (its resolution plus its updater's scheduling delay), so counted at
// the real times of the requests the bound stretches by L: the admitted
// units whose real times lie in any closed interval of length d are at
// most burst + events*(d+L)/period (New), limit*(ceil((d+L)/window)+1)
// (NewWindow): for a nanotime.Coarse of resolution 1ms on an unloaded
// machine, up to events*1ms/period units more than New's bound. The clock
// must never go back.
func WithClock(clock nanotime.Clock) Option {
	return func(c *config) { c.clock, c.clockSet = clock, true }
}

// WithIPv6Prefix sets how many leading bits of an IPv6 address name its
// client in the Addr methods, in [1, 128] (default 64: one client owns a
// /64).
func WithIPv6Prefix(bits int) Option { return func(c *config) { c.v6bits = bits } }

// Table is a fixed-size, lock-free table of per-key limiters, all with the
// parameters given to New or NewWindow. Its methods are safe for concurrent
// use. The zero Table has no slots and denies every request (see ErrFull).
// A Table must not be copied after first use.
type Table struct {
	_      noCopy
	k      *kind
	seeds  [3]maphash.Seed // one hash a kind of key: bytes, uint64, address
	clock  nanotime.Clock  // nil: nanotime.Now
	policy policy
	v6bits int
	groups uint64
	slots  []slot // groups*4 slots, each group on one cache line
	sk     sketch

	// evicted, if set (by tests), is told the tag and debt of each key a
	// slot is taken from, as the sketch records it.
	evicted func(tag, owed uint64)
	// claiming, if set (by tests), runs before each claim's compare-and-swap.
	claiming func()

	reuses, evictions, refusals, claims, releases striped.Counter
}

// noCopy makes go vet's copylocks check report copies of a Table.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}

// slot is a key's tag and its limiter's state word, one atomic128 pair.
type slot = [2]uint64

// New returns a table of token buckets, each refilled with events tokens
// per period and holding up to burst: any parameters gcra.New
// takes (at most one token a nanosecond, burst times the token
// time at most 2^62 ns), each key's limiter exact to the nanosecond. It
// returns a *limit.ParamError for parameters out of range.
func New(events int64, period time.Duration, burst int64, opts ...Option) (*Table, error) {
	k, err := newBucketKind(events, period, burst)
	if err != nil {
		return nil, err
	}
	return newTable(k, opts)
}

// NewWindow returns a table of sliding-window counters, each admitting
// limit units per window (package packed64's 64-bit window: limit at most
// 262143, window at most 2^62ns). It returns a *limit.ParamError for
// parameters out of range. A window evicted while it counts something owes
// until its count ends (up to two windows), more than a bucket owes: under
// floods that do not fit the table, windows delay innocent keys more.
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
	c := config{slots: defaultCapacity, v6bits: 64}
	for i, o := range opts {
		if o == nil {
			return nil, &limit.ParamError{Pkg: "keyed", Param: "option", Value: i, Reason: "a nil Option"}
		}
		o(&c)
	}
	switch {
	case c.slotsErr != nil:
		return nil, c.slotsErr
	case c.clockSet && c.clock == nil:
		return nil, &limit.ParamError{Pkg: "keyed", Param: "clock", Value: c.clock, Reason: "the clock must not be nil"}
	case c.v6bits < 1 || c.v6bits > 128:
		return nil, &limit.ParamError{Pkg: "keyed", Param: "ipv6 prefix", Value: c.v6bits, Min: 1, Max: 128}
	}
	groups := (uint64(c.slots) + groupSlots - 1) / groupSlots
	if need, most := int64(groups)*groupSlots*slotBytes, debug.SetMemoryLimit(-1); need > most {
		return nil, &limit.ParamError{Pkg: "keyed", Param: "capacity", Value: int(c.slots),
			Reason: fmt.Sprintf("its table takes %d bytes, over the Go memory limit of %d", need, most)}
	}
	t := &Table{k: k, clock: c.clock, policy: c.policy, v6bits: c.v6bits,
		groups: groups, slots: alignedSlots(groups * groupSlots), sk: make(sketch, groups*groupSlots)}
	for i := range t.seeds {
		t.seeds[i] = maphash.MakeSeed()
	}
	// The counters' cells, one a P, now rather than at a first decision:
	// all the table's memory is taken here.
	for _, c := range []*striped.Counter{&t.reuses, &t.evictions, &t.refusals, &t.claims, &t.releases} {
		c.Add(0)
	}
	return t, nil
}

// alignedSlots returns n zero slots starting on a 64-byte boundary, in
// memory holding no pointers (the garbage collector never scans it).
func alignedSlots(n uint64) []slot {
	raw := make([]uint64, 2*n+7)
	off := (64 - uintptr(unsafe.Pointer(&raw[0]))%64) % 64 / 8
	return unsafe.Slice((*slot)(unsafe.Pointer(&raw[off])), n)
}

// capacity returns the number of slots: the most keys the table holds.
func (t *Table) capacity() int { return len(t.slots) }

// now reads the table's clock: nanotime.Now, called directly, when none
// was set (and in the zero Table, which denies at any time).
func (t *Table) now() int64 {
	if t.clock == nil {
		return nanotime.Now()
	}
	return t.clock()
}

// Stats are a table's counts since New. Read while decisions run, each
// count is read separately (striped.Counter's Load), so they add up only
// once the decisions they count have returned. Decisions themselves are
// not counted: a counter updated by every decision would cost about as
// much as a decision on a key the table holds, and a caller that wants the
// counts has each decision at hand (package httplimit counts its own).
type Stats struct {
	// Keys is the number of slots holding a key, idle or not (at most
	// the capacity).
	Keys int64
	// Evictions counts new keys placed in a slot whose key owed something
	// in the last 10ms (by default); the sketch keeps what it owed.
	Evictions int64
	// Refusals counts new keys denied for want of an idle slot
	// (WithRefuse).
	Refusals int64
}

// Stats returns the table's counts.
func (t *Table) Stats() Stats {
	return Stats{
		Keys:      t.claims.Load() - t.releases.Load(),
		Evictions: t.evictions.Load(),
		Refusals:  t.refusals.Load(),
	}
}

// group returns the index of the first group of hash h, from its high
// bits.
func (t *Table) group(h uint64) uint64 {
	g, _ := bits.Mul64(h, t.groups)
	return g
}

// groupAt returns group g, for g < t.groups (as group and group2 return):
// its address without the slice expression's checks, which the fast path
// would otherwise pay on every decision.
func (t *Table) groupAt(g uint64) *[groupSlots]slot {
	return (*[groupSlots]slot)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(t.slots)), g*groupSlots*uint64(unsafe.Sizeof(slot{}))))
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
	one    bool // n = 1, and only the Result's OK is wanted

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
