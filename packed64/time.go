package packed64

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/cellrate/cellrate/internal/slide"
	"github.com/cellrate/cellrate/limit"
)

// HighWater is a reference time for reading the words of one or more
// limiters: the cells raise it before they write a word, and read it after
// they load one. The zero value holds math.MinInt64, the start of time, so
// it suits any clock.
//
// The mark only rises. A now far ahead of the clock the others read raises
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
// high-water mark plus slack, the slack of the word's parameters, saturated
// at math.MaxInt64.
func (h *HighWater) Ref(slack int64) int64 { return addSat(h.mark(), slack) }

// Raise makes the mark at least now - slack, to be called before writing a
// word stamped at now. It writes only when now is more than slack past the
// mark, so limiters sharing a HighWater rarely write it.
func (h *HighWater) Raise(now, slack int64) {
	for {
		t := h.t.Load()
		if now <= addSat(t^bias, slack) || h.t.CompareAndSwap(t, now^bias) {
			return
		}
	}
}

// addSat returns a + b, saturated to int64.
func addSat(a, b int64) int64 {
	s := a + b
	if (s > a) != (b > 0) { // the sum wrapped
		if b > 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return s
}

// subSat returns a - b, saturated to int64.
func subSat(a, b int64) int64 {
	s := a - b
	if (a^b)&(a^s) < 0 { // the difference wrapped
		if a >= 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return s
}

// clock maps nanoseconds to a layout's time units and back, and recovers a
// full unit count from a field holding its low bits.
type clock struct {
	origin int64  // ns at unit 0
	shift  uint8  // a unit is 2^shift ns
	bits   uint8  // width of the time field
	slack  int64  // HighWater slack in ns: 2^(bits-12) units, at most 2^40ns
	mask   uint64 // 2^bits - 1
}

func newClock(origin int64, shift, bits uint8) clock {
	return clock{origin: origin, shift: shift, bits: bits,
		slack: 1 << min(bits-12+shift, 40), mask: 1<<bits - 1}
}

// wrap returns 2^(bits+shift) ns, the time the field takes to wrap, or
// math.MaxInt64 if int64 nanoseconds never reach it.
func (c *clock) wrap() time.Duration {
	if c.bits+c.shift >= 63 {
		return math.MaxInt64
	}
	return time.Duration(1) << (c.bits + c.shift)
}

// units returns t in whole units since the origin, rounded down; a
// difference from the origin beyond int64 is taken as the nearest int64.
func (c *clock) units(t int64) int64 { return subSat(t, c.origin) >> c.shift }

// unwrap returns the largest unit count at or before refU whose low bits
// are field: the time a word was written, if refU is at or after it.
func (c *clock) unwrap(field uint64, refU int64) int64 {
	return refU - int64((uint64(refU)-field)&c.mask)
}

// after returns how many ns after now unit base+off begins, that unit
// being after now's: limit.Never if it is past the last unit a time maps
// to (it never comes) or more than math.MaxInt64 ns away. base+off is
// above now's unit, so it is only its top that can pass the int64 range.
func (c *clock) after(base, off int64, now int64) int64 {
	last := c.units(math.MaxInt64) // >= 0: the origin is an int64
	if base > last || off > 0 && base > last-off {
		return limit.Never
	}
	// The unit begins at origin + (base+off)<<shift, at most MaxInt64 and
	// after now: the int64 sum, taken modulo 2^64, is exact.
	return slide.After(c.origin+(base+off)<<c.shift, 0, now)
}
