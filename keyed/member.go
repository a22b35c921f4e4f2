package keyed

import (
	"hash/maphash"
	"net/netip"

	"github.com/cellrate/cellrate/atomic128"
	"github.com/cellrate/cellrate/internal/backoff"
	"github.com/cellrate/cellrate/limit"
)

// The Take forms make a key's limiter a member of an all-or-nothing
// composition (limit.All, through a limit.Member that holds the key): each
// is the AllowN form at now that also returns, when it admits n > 0, the
// Receipt that Refund takes to give the units back.
//
// A Receipt names the slot the admission wrote and the key's state before
// and after it. Refund is exact (the key's limiter ends as if the admission
// had never happened) when the slot still holds the key with that after
// state: when nothing was admitted for the key since, or everything
// admitted since was given back. Otherwise it gives back nothing, as
// package gcra's Refund does and for the same reason: later admissions were
// decided with the units taken. A key placed by the admission goes back to
// the fresh state it was placed with; the slot's former key is not brought
// back (it was idle, or its loss was forgiven and counted in Stats). Stats
// count the admission and not the refund.

// TakeAt is AllowNAt that also returns a Receipt for Refund.
func (t *Table) TakeAt(key string, now, n int64) (limit.Result, limit.Receipt, error) {
	return t.take(maphash.String(t.seed, key), now, n)
}

// TakeBytesAt is AllowNBytesAt that also returns a Receipt for Refund.
func (t *Table) TakeBytesAt(key []byte, now, n int64) (limit.Result, limit.Receipt, error) {
	return t.take(maphash.Bytes(t.seed, key), now, n)
}

// TakeUint64At is AllowNUint64At that also returns a Receipt for Refund.
func (t *Table) TakeUint64At(key uint64, now, n int64) (limit.Result, limit.Receipt, error) {
	return t.take(t.hash64(key), now, n)
}

// TakeAddrAt is AllowNAddrAt that also returns a Receipt for Refund.
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
// Like decide, it looks in the key's first group's line before building
// the probe of both groups.
func (t *Table) take(h uint64, now, n int64) (limit.Result, limit.Receipt, error) {
	if n <= 0 || n > t.k.burst() {
		r, err := t.decide(h, now, n, false)
		return r, limit.Receipt{}, err
	}
	tag := tagOf(h)
	g1 := t.group(h)
	grp := (*[groupSlots]slot)(t.slots[g1*groupSlots:])
	var spin backoff.Spin
	for ; ; spin.Wait() {
		for i := range grp {
			if atomic128.LoadFirstAligned(&grp[i]) != tag {
				continue
			}
			if r, rc, err, done := t.takeSlot(&grp[i], g1*groupSlots+uint64(i), tag, h, now, n); done {
				return r, rc, err
			}
			goto again
		}
		{
			p := t.probe(h)
			for i := groupSlots; i < len(p.s); i++ {
				if atomic128.LoadFirstAligned(p.s[i]) != tag {
					continue
				}
				if r, rc, err, done := t.takeSlot(p.s[i], p.g2*groupSlots+uint64(i-groupSlots), tag, h, now, n); done {
					return r, rc, err
				}
				goto again
			}
			r, err, done := t.insert(&p, now, n)
			if !done {
				goto again
			}
			t.count(r, err)
			if !r.OK || err != nil || p.word == 0 {
				return r, limit.Receipt{}, err
			}
			return r, limit.Receipt{At: now, N: n, Before: [2]uint64{0, p.settled}, After: [2]uint64{tag, p.word}}, nil
		}
	again:
	}
}

// takeSlot decides on slot s (index idx) if it still holds tag; done is
// false if the slot changed meanwhile.
func (t *Table) takeSlot(s *slot, idx, tag, h uint64, now, n int64) (limit.Result, limit.Receipt, error, bool) {
	tg, w := atomic128.LoadAligned(s)
	if tg != tag {
		return limit.Result{}, limit.Receipt{}, nil, false
	}
	r, next, err, done := t.run(s, tag, w, now, n, h, false)
	if !done {
		return r, limit.Receipt{}, err, false
	}
	t.count(r, err)
	if next == w {
		return r, limit.Receipt{}, err, true
	}
	return r, limit.Receipt{At: now, N: n, Before: [2]uint64{w, idx}, After: [2]uint64{tag, next}}, nil, true
}
