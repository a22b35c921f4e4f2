package keyed

import (
	"net/netip"

	"github.com/cellrate/cellrate/atomic128"
	"github.com/cellrate/cellrate/internal/backoff"
	"github.com/cellrate/cellrate/limit"
)

// TakeAt is AllowNAt that also returns, when it admits n > 0, the Receipt
// that Refund takes to give the units back. With the two, a key's limiter
// is a member of an all-or-nothing composition (limit.All) through a
// limit.Member that holds the key: ExampleTable_TakeAt shows one, beside a
// global limit.
//
// A Receipt names the slot the admission wrote and the key's state before
// and after it. Refund is exact (the key's limiter ends as if the admission
// had never happened) when the slot still holds the key with that after
// state: when nothing was admitted for the key since, or everything
// admitted since was given back. Otherwise it gives back nothing, as
// package gcra's Refund does and for the same reason: later admissions were
// decided with the units taken. A key placed by the admission goes back to
// a fresh state, which starts again from what the table's sketch holds for
// it. Stats count the admission and not the refund.
func (t *Table) TakeAt(key string, now, n int64) (limit.Result, limit.Receipt, error) {
	return t.take(t.strHash(key), now, n)
}

// TakeAddrAt is TakeAt for a client address (see AllowAddr).
func (t *Table) TakeAddrAt(addr netip.Addr, now, n int64) (limit.Result, limit.Receipt, error) {
	return t.take(t.hashAddr(addr), now, n)
}

// Refund gives back the units of the admission that returned rc (see
// TakeAt for when it is exact). A zero Receipt refunds nothing. Each
// Receipt must be refunded at most once, and only to the table that issued
// it.
func (t *Table) Refund(rc limit.Receipt) {
	if rc.N == 0 || rc.Before[1] >= uint64(len(t.slots)) {
		return
	}
	tag, after, before := rc.After[0], rc.After[1], rc.Before[0]
	atomic128.CompareAndSwapAligned(&t.slots[rc.Before[1]], tag, after, tag, before)
}

// take is decide with a Receipt: Before holds the key's word before the
// admission and its slot's index, After its tag and the word written.
func (t *Table) take(h uint64, now, n int64) (limit.Result, limit.Receipt, error) {
	if n <= 0 || t.groups == 0 || n > t.k.burst() {
		r, err := t.decide(h, now, n, false, false)
		return r, limit.Receipt{}, err
	}
	var spin backoff.Spin
	for ; ; spin.Wait() {
		p := t.probe(h)
		if i, _, ok := p.find(); ok {
			idx := p.groupOf(i)*groupSlots + uint64(i%groupSlots)
			if r, rc, err, done := t.takeSlot(p.s[i], idx, p.tag, now, n); done {
				return r, rc, err
			}
			continue
		}
		r, err, done := t.insert(&p, now, n, false)
		if !done {
			continue
		}
		if !r.OK || err != nil || p.word == 0 {
			return r, limit.Receipt{}, err
		}
		return r, limit.Receipt{At: now, N: n, Before: [2]uint64{0, p.settled}, After: [2]uint64{p.tag, p.word}}, nil
	}
}

// takeSlot decides on slot s (index idx) if it still holds tag; done is
// false if the slot changed meanwhile.
func (t *Table) takeSlot(s *slot, idx, tag uint64, now, n int64) (limit.Result, limit.Receipt, error, bool) {
	tg, w := atomic128.LoadAligned(s)
	if tg != tag {
		return limit.Result{}, limit.Receipt{}, nil, false
	}
	r, next, err, done := t.run(s, tag, w, now, n, false, false)
	if !done {
		return r, limit.Receipt{}, err, false
	}
	if next == w {
		return r, limit.Receipt{}, err, true
	}
	return r, limit.Receipt{At: now, N: n, Before: [2]uint64{w, idx}, After: [2]uint64{tag, next}}, nil, true
}
