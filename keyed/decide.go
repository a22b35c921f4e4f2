package keyed

import (
	"math"
	"math/bits"
	"sync/atomic"
	"time"

	"github.com/cellrate/cellrate/atomic128"
	"github.com/cellrate/cellrate/internal/backoff"
	"github.com/cellrate/cellrate/limit"
)

// allow1 decides one unit for the key hashing to h. Its fast path is a
// key with a written state in one of its groups, decided by one attempt of
// the load, step and compare-and-swap (the same step as decide's);
// everything else goes to decide. live says now was read from the table's
// clock, which a new key then reads again (see start).
func (t *Table) allow1(h uint64, now int64, live bool) bool {
	if t.groups == 0 {
		return false // the zero Table
	}
	tag := tagOf(h)
	g := t.group(h)
	for range 2 {
		grp := t.groupAt(g)
		// Which slots hold the tag, without a branch a slot: a key's slot
		// is anywhere in its group, and a branch on each would mispredict.
		m := b2u(atomic128.LoadFirstAligned(&grp[0]) == tag) |
			b2u(atomic128.LoadFirstAligned(&grp[1]) == tag)<<1 |
			b2u(atomic128.LoadFirstAligned(&grp[2]) == tag)<<2 |
			b2u(atomic128.LoadFirstAligned(&grp[3]) == tag)<<3
		if m != 0 {
			// The state word alone: the compare-and-swap admits only if
			// the pair still holds the tag and w, and a denial first
			// checks the pair with one load.
			p := &grp[bits.TrailingZeros(m)&(groupSlots-1)]
			w := atomic.LoadUint64(&p[1])
			if w == 0 {
				break
			}
			var next uint64
			var ok bool
			switch {
			case t.k.window:
				next, ok = t.k.windowOne(w, now)
			case t.k.oneNs:
				next, ok = t.k.gcraOneNs(w, now)
			default:
				next, ok = t.k.gcraOne(w, now)
			}
			if !ok {
				if tg, w2 := atomic128.LoadAligned(p); tg != tag || w2 != w {
					break
				}
				return false
			}
			if atomic128.CompareAndSwapAligned(p, tag, w, tag, next) {
				return true
			}
			break
		}
		g = t.group2(h, g)
	}
	r, _ := t.decide(h, now, 1, true, live)
	return r.OK
}

// b2u is 1 for true, 0 for false (a flag, not a branch).
func b2u(b bool) uint {
	if b {
		return 1
	}
	return 0
}

// decide runs one decision for the key hashing to h. With one (n = 1),
// only the Result's OK is set.
func (t *Table) decide(h uint64, now, n int64, one, live bool) (limit.Result, error) {
	switch {
	case t.groups == 0:
		return limit.Result{RetryAfter: limit.Never}, ErrFull
	case n < 0:
		return limit.Result{RetryAfter: limit.Never}, limit.ErrNegativeCost
	case n > t.k.burst():
		return limit.Result{RetryAfter: limit.Never}, limit.ErrCostExceedsBurst
	}
	tag := tagOf(h)
	var spin backoff.Spin
	for ; ; spin.Wait() {
		p := t.probe(h)
		if i, w, ok := p.find(); ok {
			if r, _, err, done := t.run(p.s[i], tag, w, now, n, one, live); done {
				return r, err
			}
			continue
		}
		p.one = one
		if r, err, done := t.insert(&p, now, n, live); done {
			return r, err
		}
	}
}

// find returns the slot of p holding the key's tag, and its word.
func (p *probe) find() (int, uint64, bool) {
	for i, s := range p.s {
		if atomic128.LoadFirstAligned(s) != p.tag {
			continue
		}
		if tg, w := atomic128.LoadAligned(s); tg == p.tag {
			return i, w, true
		}
	}
	return 0, 0, false
}

// run decides on slot s of the key with tag, which held w, and returns the
// word it wrote (w if none); done is false if the slot changed meanwhile.
// A word never written (0) is a fresh limiter, which starts from what the
// sketch holds for the key (see start).
func (t *Table) run(s *slot, tag, w uint64, now, n int64, one, live bool) (limit.Result, uint64, error, bool) {
	from := w
	if w == 0 {
		var nb int64
		from, nb, now = t.start(tag, now, live)
		if now < nb {
			return notBefore(nb, now, n), w, nil, true
		}
	}
	next, r, write, err := t.step(from, now, n, one)
	if !write {
		return r, w, err, true
	}
	return r, next, nil, atomic128.CompareAndSwapAligned(s, tag, w, tag, next)
}

// step runs the kind's step on word w at now, setting only the Result's OK
// with one (n = 1), and raises the reference time for a word to be written.
func (t *Table) step(w uint64, now, n int64, one bool) (next uint64, r limit.Result, write bool, err error) {
	ref := t.k.ref()
	if one {
		next, r.OK = t.k.stepOne(w, now, ref)
		write = r.OK
	} else {
		next, r, write, err = t.k.step(w, now, ref, n)
	}
	if write {
		t.k.raise(now, ref)
	}
	return next, r, write, err
}

// start returns the word a fresh limiter of the key with tag starts from,
// the time before which it admits nothing (a window's), and the time to
// decide at: now, or the clock read again if live. The clock is read after
// the sketch, so every debt the sketch held for a key whose slot was taken
// when it was idle lies at or before that time: under a clock that never
// goes back, only the debt of a key that was not idle can delay a new key.
func (t *Table) start(tag uint64, now int64, live bool) (uint64, int64, int64) {
	o := t.sk.owed(tag)
	if live {
		now = t.now()
	}
	w, nb := t.k.start(o, t.k.ref(), now)
	return w, nb, now
}

// notBefore is the decision on a fresh window at a now before nb: denied
// (n = 0 admitted), until nb.
func notBefore(nb, now, n int64) limit.Result {
	if n == 0 {
		return limit.Result{OK: true}
	}
	return limit.Result{RetryAfter: until(nb, now)}
}

// until returns at - now, for at after now, saturated at limit.Never.
func until(at, now int64) time.Duration {
	return time.Duration(min(uint64(at)-uint64(now), uint64(limit.Never)))
}

// Victim classes, in order of preference.
const (
	none  = iota // another key's pending claim, about to settle
	busy         // a key that owes something at now
	idle         // a key that owes nothing at now
	empty        // no key
)

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
func (t *Table) insert(p *probe, now, n int64, live bool) (limit.Result, error, bool) {
	var tags, words [2 * groupSlots]uint64
	for i, s := range p.s {
		tags[i], words[i] = atomic128.LoadAligned(s)
	}
	for i := range p.s {
		switch tags[i] {
		case p.tag:
			return limit.Result{}, nil, false // settled meanwhile
		case p.tag | pending:
			return t.settle(p, i, now, n, live)
		}
	}
	if n == 0 {
		return t.query(p.tag, now, live), nil, true
	}
	v := t.choose(p, &tags, &words, now)
	switch {
	case v.class == none && !v.held:
		return limit.Result{}, nil, false // every slot is a pending claim
	case v.class == none:
		t.refusals.Add(1)
		return limit.Result{RetryAfter: v.retry}, ErrFull, true
	}
	if !t.claim(p, v, tags[v.i], words[v.i]) {
		return limit.Result{}, nil, false
	}
	return t.settle(p, v.i, now, n, live)
}

// query answers n = 0 for a key the table does not hold, as its fresh
// limiter would, claiming nothing.
func (t *Table) query(tag uint64, now int64, live bool) limit.Result {
	w, nb, now := t.start(tag, now, live)
	if now < nb {
		return notBefore(nb, now, 0)
	}
	_, r, _, _ := t.k.step(w, now, t.k.ref(), 0)
	return r
}

// claim takes victim v's slot, which held tag and w, for p's key (pending)
// and counts it. What the victim's key owes goes to the sketch before its
// slot is taken, so that when it comes back (after seeing the slot taken)
// it starts owing at least that.
func (t *Table) claim(p *probe, v victim, tag, w uint64) bool {
	if v.class != empty {
		t.sk.record(tag, v.owed)
		if t.evicted != nil {
			t.evicted(tag, v.owed)
		}
	}
	if t.claiming != nil {
		t.claiming()
	}
	if !atomic128.CompareAndSwapAligned(p.s[v.i], tag, w, p.tag|pending, 0) {
		return false
	}
	switch v.class {
	case empty:
		t.claims.Add(1)
	case busy:
		t.evictions.Add(1)
	default:
		t.reuses.Add(1)
	}
	return true
}

// grace is how long a key must have owed nothing before its slot is
// reused as idle. The sketch keeps the debt of every key whose slot is
// taken, idle or not, for callers of that key with times older than the
// taker's; with the grace, a debt kept for an idle key lies at least grace
// before the taker's now, so a new key decided at a time read up to grace
// before another caller's never meets it.
const grace = int64(10 * time.Millisecond)

// subSat returns a - b for b >= 0, saturated at math.MinInt64.
func subSat(a, b int64) int64 {
	if a < math.MinInt64+b {
		return math.MinInt64
	}
	return a - b
}

// victim is the slot a new key takes (i, of class), what its key owes,
// and when there is none, the wait until a slot becomes idle (held false
// if every slot is a pending claim).
type victim struct {
	i, class int
	owed     uint64
	retry    time.Duration
	held     bool
}

// choose returns the slot a new key takes: an empty slot, else an idle one
// (owing nothing since grace before now) from the group with more of them
// (so groups fill evenly), else (by default) the slot of the key that owes
// most; the first of equals.
func (t *Table) choose(p *probe, tags, words *[2 * groupSlots]uint64, now int64) victim {
	classes, owes, free := t.classify(p, tags, words, now)
	v := victim{class: none, retry: limit.Never}
	for i, c := range classes {
		switch {
		case c == busy:
			v.held = true
			if t.policy == evict && v.class <= busy && (v.class == none || owes[i] > v.owed) {
				v.i, v.class, v.owed = i, busy, owes[i]
			}
		case c > v.class || c == v.class && c >= idle && free[i/groupSlots] > free[v.i/groupSlots]:
			v.i, v.class, v.owed = i, c, owes[i]
		}
	}
	if v.class == none && v.held {
		v.retry = t.retry(&classes, &owes, now)
	}
	return v
}

// retry returns the wait until the soonest busy slot of classes becomes
// idle, if nothing is admitted meanwhile.
func (t *Table) retry(classes *[2 * groupSlots]int, owes *[2 * groupSlots]uint64, now int64) time.Duration {
	d := limit.Never
	for i, c := range classes {
		if c == busy {
			d = min(d, t.k.wait(owes[i], subSat(now, grace)))
		}
	}
	return d
}

// classify returns the class of each slot of p, what its key owes, and
// each group's count of empty and idle slots.
func (t *Table) classify(p *probe, tags, words *[2 * groupSlots]uint64, now int64) (classes [2 * groupSlots]int, owes [2 * groupSlots]uint64, free [2]int) {
	ref := t.k.ref()
	paid := t.k.paidBy(subSat(now, grace)) // owing at most this is idle
	for i := range p.s {
		switch {
		case tags[i]&pending != 0:
			classes[i] = none
		case tags[i] == 0:
			classes[i] = empty
		default:
			owes[i] = t.k.owed(words[i], ref)
			classes[i] = busy
			if owes[i] <= paid {
				classes[i] = idle
			}
		}
		if classes[i] >= idle {
			free[i/groupSlots]++
		}
	}
	return classes, owes, free
}

// settle turns the pending claim of the key in slot i of p into the key's
// slot with its first decision, unless another slot holds the key.
//
// The first decision starts from what the sketch holds for the key, read
// after making sure no other slot holds it: if a slot of the key was taken,
// the sketch recorded its debt before the slot was taken, so the key's new
// limiter owes at least what the old one did, and its admissions continue
// the old limiter's as if it had never lost its slot.
func (t *Table) settle(p *probe, i int, now, n int64, live bool) (limit.Result, error, bool) {
	if !t.alone(p, i) {
		return limit.Result{}, nil, false
	}
	tag := p.tag
	var next uint64
	var r limit.Result
	from, nb, now := t.start(tag, now, live)
	if now < nb {
		r = notBefore(nb, now, n)
	} else {
		var write bool
		next, r, write, _ = t.step(from, now, n, p.one) // n is in range
		if !write {
			next = 0
		}
	}
	if !atomic128.CompareAndSwapAligned(p.s[i], tag|pending, 0, tag, next) {
		return limit.Result{}, nil, false
	}
	p.settled, p.word = p.groupOf(i)*groupSlots+uint64(i%groupSlots), next
	return r, nil, true
}

// alone makes sure no slot of p but the i-th holds its key (see insert):
// it removes the key's pending claims after slot i, and reports false,
// having given slot i up, if the key has a slot or an earlier claim.
func (t *Table) alone(p *probe, i int) bool {
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
			return false
		}
	}
	return true
}
