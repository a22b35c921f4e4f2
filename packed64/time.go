package packed64

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/cellrate/cellrate/internal/slide"
)

// HighWater is a reference time for reading the words of one or more
// limiters: the cells raise it before they write a word, and read it after
// they load one. The zero value holds 0, right for clocks that start at or
// after 0 such as nanotime.
//
// The mark only rises. A now far ahead of the clock the others read raises
// it too, and words written before it may then refill (or forget) nothing
// until the clock comes within one wrap of that now; they never admit more.
// Feed all limiters sharing a HighWater from one clock.
type HighWater struct {
	t atomic.Int64
}

// Ref returns the reference time for a word loaded before the call: the
// high-water mark plus slack, the slack of the word's parameters.
func (h *HighWater) Ref(slack int64) int64 { return h.t.Load() + slack }

// Raise makes the mark at least now - slack, to be called before writing a
// word stamped at now. It writes only when now is more than slack past the
// mark, so limiters sharing a HighWater rarely write it.
func (h *HighWater) Raise(now, slack int64) {
	for {
		t := h.t.Load()
		if now <= t+slack || h.t.CompareAndSwap(t, now) {
			return
		}
	}
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

// units returns t in whole units since the origin, rounded down.
func (c *clock) units(t int64) int64 { return (t - c.origin) >> c.shift }

// unwrap returns the largest unit count at or before refU whose low bits
// are field: the time a word was written, if refU is at or after it.
func (c *clock) unwrap(field uint64, refU int64) int64 {
	return refU - int64((uint64(refU)-field)&c.mask)
}

// after returns how many ns after now unit u begins, saturated at
// limit.Never; u must begin after now.
func (c *clock) after(u int64, now int64) int64 {
	return slide.After(c.origin, uint64(u)<<c.shift, now)
}
