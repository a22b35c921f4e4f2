package keyed

import (
	"math"
	"math/bits"
	"time"

	"github.com/cellrate/cellrate/internal/packword"
	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/packed64"
)

// This file is keyed's only use of package packed64: a slot's state is a
// packed64 word, stepped by packed64's own Step; what keyed adds is reading
// a word's idle time (when it becomes the same as no entry) and its loss,
// from the word's layout (internal/packword).

// kind is the limiter every slot of a table runs: a packed64 bucket or
// window with the table's one parameter set.
type kind struct {
	window bool
	b      packed64.BucketParams
	w      packed64.WindowParams
	hw     packed64.HighWater
	slack  int64
	shift  uint   // a time unit is 2^shift ns
	mask   uint64 // the time field's mask
	wu     int64  // window: its length in units
	events uint64 // bucket: tokens per period
	period uint64 // bucket: the period in ns
}

func newBucketKind(events int64, period time.Duration, burst int64) (*kind, error) {
	p, err := packed64.NewBucketParams(events, period, burst)
	if err != nil {
		return nil, err
	}
	return &kind{b: p, slack: p.Slack(), shift: unitShift(p.Unit()),
		mask: 1<<packword.BucketTimeBits - 1, events: uint64(events), period: uint64(period)}, nil
}

func newWindowKind(limit int64, window time.Duration) (*kind, error) {
	p, err := packed64.NewWindowParams(limit, window)
	if err != nil {
		return nil, err
	}
	return &kind{window: true, w: p, slack: p.Slack(), shift: unitShift(p.Unit()),
		mask: 1<<packword.WindowStartBits - 1, wu: int64(p.Window() / p.Unit())}, nil
}

func unitShift(u time.Duration) uint { return uint(bits.TrailingZeros64(uint64(u))) }

// Bounds of the parameters packed64 takes, for keyed's ParamErrors.
const (
	maxBurst  = packed64.MaxBurst
	maxLimit  = packed64.MaxWindowLimit
	maxWindow = packed64.MaxWindow
	minToken  = 256 // ns a token takes to refill, at least
)

// ref returns the reference time for unwrapping a word loaded before the
// call (saturated at the top of time, where a wrapped sum would misread
// every word).
func (k *kind) ref() int64 { return k.hw.Ref(k.slack) }

// step is the limiter's pure step on word w at now, read against ref. It
// also reports whether the next word must be written: packed64's rule,
// an admission of n > 0 units, even one that leaves the word bit for bit
// the same (restamped a whole number of wraps on) unless now is at or
// before ref.
func (k *kind) step(w uint64, now, ref, n int64) (uint64, limit.Result, bool, error) {
	var next uint64
	var r limit.Result
	var err error
	if k.window {
		var s packed64.WindowState
		s, r, err = k.w.Step(packed64.WindowState{Word: packed64.WindowWord(w), Ref: ref}, now, n)
		next = uint64(s.Word)
	} else {
		var s packed64.BucketState
		s, r, err = k.b.Step(packed64.BucketState{Word: packed64.BucketWord(w), Ref: ref}, now, n)
		next = uint64(s.Word)
	}
	return next, r, r.OK && err == nil && n != 0 && !(next == w && now <= ref), err
}

// stepOne is step for n = 1 without the Result: the next word and whether
// the unit is admitted (which is then written, as step says).
func (k *kind) stepOne(w uint64, now, ref int64) (uint64, bool) {
	if k.window {
		next, ok := k.w.StepOne(packed64.WindowWord(w), now, ref)
		return uint64(next), ok
	}
	next, ok := k.b.StepOne(packed64.BucketWord(w), now, ref)
	return uint64(next), ok
}

// raise is called before writing a word stepped at now against ref.
func (k *kind) raise(now, ref int64) {
	if now > ref {
		k.hw.Raise(now, k.slack)
	}
}

// burst returns the most units one request may ask for.
func (k *kind) burst() int64 {
	if k.window {
		return k.w.Limit()
	}
	return k.b.Burst()
}

// never is an idle time for a word that is idle at every time.
const never = math.MinInt64

// idle returns the time (ns) from which word w is the same as no entry:
// a full bucket, an empty window; never if it is at every time, and
// math.MaxInt64 if not within int64 time. The
// decisions of a fresh word and of w agree at every now at or after it.
func (k *kind) idle(w uint64, ref int64) int64 {
	refU := ref >> k.shift
	if k.window {
		s := packword.UnpackWindow(w)
		if s.Prev|s.Cur == 0 {
			return never
		}
		end := addSat(k.unwrap(s.Start, refU), k.wu) // the end of the window after Prev
		if s.Cur != 0 {
			end = addSat(end, k.wu)
		}
		return k.ns(end)
	}
	s := packword.UnpackBucket(w)
	if s.Deficit == 0 {
		return never
	}
	return k.ns(addSat(k.unwrap(s.Time, refU), int64(s.Deficit)))
}

// loss returns what dropping word w at now forgives its key, given that it
// is not idle at now: for a bucket, the tokens its deficit lacks (rounded
// up); for a window, the units its two counted windows hold.
func (k *kind) loss(w uint64, now, ref int64) uint64 {
	u, refU := now>>k.shift, ref>>k.shift
	if k.window {
		s := packword.UnpackWindow(w)
		if st := k.unwrap(s.Start, refU); u >= st && uint64(u)-uint64(st) >= uint64(k.wu) && uint64(u)-uint64(st) < 2*uint64(k.wu) {
			return s.Cur // now is in the window after Cur's: Prev is no longer counted
		}
		return s.Prev + s.Cur
	}
	s := packword.UnpackBucket(w)
	z := addSat(k.unwrap(s.Time, refU), int64(s.Deficit))
	d := uint64(z) - uint64(u) // units lacking at now: z is after now
	// tokens = ceil(d * 2^shift * events / period), in 128 bits
	hi, lo := bits.Mul64(d, k.events)
	if k.shift != 0 {
		if hi>>(64-k.shift) != 0 {
			return math.MaxInt64
		}
		hi, lo = hi<<k.shift|lo>>(64-k.shift), lo<<k.shift
	}
	if hi >= k.period {
		return math.MaxInt64
	}
	q, r := bits.Div64(hi, lo, k.period)
	if r != 0 {
		q++
	}
	return q
}

// addSat returns a + b for b >= 0, saturated at math.MaxInt64.
func addSat(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// unwrap returns the latest unit count at or before refU whose low bits
// are field (packed64's reading of a time field).
func (k *kind) unwrap(field uint64, refU int64) int64 {
	return refU - int64((uint64(refU)-field)&k.mask)
}

// ns returns the first ns of unit u, saturated at the ends of int64.
func (k *kind) ns(u int64) int64 {
	switch {
	case u > math.MaxInt64>>k.shift:
		return math.MaxInt64
	case u < math.MinInt64>>k.shift:
		return math.MinInt64 + 1
	}
	return u << k.shift
}
