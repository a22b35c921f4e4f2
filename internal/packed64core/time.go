package packed64core

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/cellrate/cellrate/internal/backoff"
	"github.com/cellrate/cellrate/internal/slide"
	"github.com/cellrate/cellrate/limit"
)

// HighWater is a reference time for reading the words of one or more
// limiters: the cells raise it before they write a word, and read it after
// they load one. The zero value holds math.MinInt64, the start of time, so
// it suits any clock.
//
// The mark only rises, but for a Bucket's or Window's Refund, which puts
// back the mark its admission raised along with the word. A now far ahead of the clock the others read raises
// it too, and words written before it may then refill (or forget) nothing
// until the clock comes within one wrap of that now; they never admit more.
// Feed all limiters sharing a HighWater from one clock.
//
// Sums of the mark and a slack saturate at math.MaxInt64: at the end of time
// the reference stays at MaxInt64, at or after every time a word can be
// written with.
type HighWater struct {
	t atomic.Int64 // the mark minus math.MinInt64, modulo 2^64
}

// bias maps the mark to what HighWater stores and back, so that the zero
// value is the start of time.
const bias = math.MinInt64

// mark returns the high-water mark.
func (h *HighWater) mark() int64 { return h.t.Load() ^ bias }

// Ref returns the reference time for a word loaded before the call: the
// high-water mark plus slack, the Slack() of the word's parameters (a
// negative slack counts as 0), saturated at math.MaxInt64.
func (h *HighWater) Ref(slack int64) int64 { return h.ref(max(slack, 0)) }

// ref is Ref for a slack known to be at least 0, as the cells' is.
func (h *HighWater) ref(slack int64) int64 { return addSat(h.mark(), slack) }

// locked is what a HighWater holds while a Bucket's or Window's Refund puts
// back both its word and the mark: the mark math.MinInt64+1, which nothing
// else writes (a raise is to a now more than the slack, at least 1, past
// the mark). Decisions that load it deny, raises refuse to pass it, and
// reads wait the two stores it lasts.
const locked = 1

// load returns the reference time of a word loaded before the call, and
// false while a Refund holds the mark (see locked).
func (h *HighWater) load(slack int64) (int64, bool) {
	t := h.t.Load()
	return addSat(t^bias, slack), t != locked
}

// read loads a word and its reference time for reads, consistent with
// each other: it waits out a Refund's hold of the mark, and loads the word
// again to see that no Refund put it back meanwhile.
func (h *HighWater) read(word *atomic.Uint64, slack int64) (uint64, int64) {
	var spin backoff.Spin
	for ; ; spin.Wait() {
		w := word.Load()
		if ref, ok := h.load(slack); ok && word.Load() == w {
			return w, ref
		}
	}
}

// raise is Raise for the cells: false, with nothing raised, while a Refund
// holds the mark, and the decision must then not write its word.
func (h *HighWater) raise(now, slack int64) bool {
	for {
		t := h.t.Load()
		if t == locked {
			return false
		}
		if now <= addSat(t^bias, slack) || h.t.CompareAndSwap(t, now^bias) {
			return true
		}
	}
}

// Raise makes the mark at least now - slack, to be called before writing a
// word stamped at now: the word of every admission at now, even one whose
// word comes out bit for bit the same as before (a whole number of wraps
// on), since the admission restamps it at now. It writes only when now is
// more than slack past the mark, so limiters sharing a HighWater rarely
// write it.
func (h *HighWater) Raise(now, slack int64) { h.raise(now, max(slack, 0)) }

// refundCell puts back the admission in rc on a cell's word and its own
// HighWater, if undo (the parameters' Undo at the current reference) allows
// it. rc holds the words and the raw marks just before and just after the
// admission. While the mark is still the admission's, the mark goes back
// too, under locked: the word and the mark are then exactly as before the
// admission, as limit.Member promises, even for an admission far ahead of
// the clock. Once the mark has moved on, the word alone goes back, read
// against the higher mark (never more admissions; see HighWater).
func refundCell(word *atomic.Uint64, hw *HighWater, rc limit.Receipt, slack int64, undo func(w uint64, ref int64) bool) {
	before, after := rc.Before[0], rc.After[0]
	if int64(rc.Before[1]) == locked {
		return // not a Receipt of this package's cells: no mark is ever locked
	}
	var spin backoff.Spin
	for ; ; spin.Wait() {
		t := hw.t.Load()
		if t == locked {
			continue // another Refund: wait for it
		}
		if !undo(word.Load(), addSat(t^bias, slack)) {
			return
		}
		if t != int64(rc.After[1]) {
			if word.CompareAndSwap(after, before) {
				return
			}
			continue
		}
		if !hw.t.CompareAndSwap(t, locked) {
			continue
		}
		if word.CompareAndSwap(after, before) {
			hw.t.Store(int64(rc.Before[1]))
			return
		}
		hw.t.Store(t)
	}
}

// undoable reports whether an admission at at can still be told from one
// a whole number of wraps later, at a reference time ref: ref is less than
// half a wrap past at. Compared as a difference, so that it holds up to the
// end of time, where at plus half a wrap would saturate.
func undoable(ref, at int64, wrap time.Duration) bool {
	return ref <= at || uint64(ref)-uint64(at) < uint64(wrap/2)
}

// addSat returns a + b for b >= 0, saturated at math.MaxInt64.
func addSat(a, b int64) int64 {
	if s := a + b; s >= a {
		return s
	}
	return math.MaxInt64
}

// clock maps nanoseconds to a layout's time units and back, and recovers a
// full unit count from a field holding its low bits. Units count from time
// 0: unit u is [u<<shift, (u+1)<<shift) ns, so every int64 time has a unit
// and every unit of int64 time begins in int64.
type clock struct {
	shift uint8  // a unit is 2^shift ns
	bits  uint8  // width of the time field
	slack int64  // HighWater slack in ns: 2^(bits-12) units, at most 2^40ns
	mask  uint64 // 2^bits - 1
}

func newClock(shift, bits uint8) clock {
	return clock{shift: shift, bits: bits, slack: 1 << min(bits-12+shift, 40), mask: 1<<bits - 1}
}

// wrap returns 2^(bits+shift) ns, the time the field takes to wrap, or
// math.MaxInt64 if int64 nanoseconds never reach it.
func (c *clock) wrap() time.Duration {
	if c.bits+c.shift >= 63 {
		return math.MaxInt64
	}
	return time.Duration(1) << (c.bits + c.shift)
}

// units returns t in whole units, rounded down.
func (c *clock) units(t int64) int64 { return t >> c.shift }

// unwrap returns the largest unit count at or before refU whose low bits
// are field: the time a word was written, if refU is at or after it.
func (c *clock) unwrap(field uint64, refU int64) int64 {
	return refU - int64((uint64(refU)-field)&c.mask)
}

// after returns how many ns after now unit base+off begins, that unit
// being after now's: limit.Never if it is past the unit of math.MaxInt64
// (time stops there, so it never comes) or more than math.MaxInt64 ns
// away. base+off is above now's unit, so only its top can pass the range of
// int64 units, and the check keeps the sum from wrapping.
func (c *clock) after(base, off int64, now int64) int64 {
	last := c.units(math.MaxInt64)
	if base > last || off > 0 && base > last-off {
		return int64(limit.Never)
	}
	// The unit begins at (base+off)<<shift, in int64 and after now.
	return slide.After((base+off)<<c.shift, 0, now)
}
