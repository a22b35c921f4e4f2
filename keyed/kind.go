package keyed

import (
	"errors"
	"math"
	"math/bits"
	"time"

	"github.com/cellrate/cellrate/internal/gcrastep"
	"github.com/cellrate/cellrate/internal/packed64core"
	"github.com/cellrate/cellrate/internal/packword"
	"github.com/cellrate/cellrate/limit"
)

// kind is the limiter every slot of a table runs, with the table's one
// parameter set: a GCRA whose state word is its TAT (package gcra's pure
// step, exact to the nanosecond), or a package packed64 sliding-window word.
//
// Both kinds read a word as what its key still owes: owed returns a value
// ordered like time (0 for nothing owed), which the sketch keeps for an
// evicted key and which a fresh word of a key starts from (see start).
type kind struct {
	window bool
	oneNs  bool // a GCRA whose step is one ns (gcrastep's StepOneNs)
	g      gcrastep.Params
	w      packed64core.WindowParams
	hw     packed64core.HighWater
	slack  int64
	shift  uint   // window: a time unit is 2^shift ns
	mask   uint64 // window: the start field's mask
	wu     int64  // window: its length in units
}

func newBucketKind(events int64, period time.Duration, burst int64) (*kind, error) {
	p, err := gcrastep.NewParams(events, period, burst)
	if err != nil {
		var pe *limit.ParamError
		if errors.As(err, &pe) {
			e := *pe
			e.Pkg = "keyed"
			return nil, &e
		}
		return nil, err
	}
	return &kind{g: p, oneNs: p.OneNs()}, nil
}

func newWindowKind(lim int64, window time.Duration) (*kind, error) {
	p, err := packed64core.NewWindowParams(lim, window)
	if err != nil {
		return nil, err
	}
	return &kind{window: true, w: p, slack: p.Slack(), shift: uint(bits.TrailingZeros64(uint64(p.Unit()))),
		mask: 1<<packword.WindowStartBits - 1, wu: int64(p.Window() / p.Unit())}, nil
}

// Bounds of the window parameters packed64 takes, for keyed's ParamErrors.
const (
	maxLimit  = packed64core.MaxWindowLimit
	maxWindow = packed64core.MaxWindow
)

// ref returns the reference time for unwrapping a window word loaded before
// the call (a GCRA word needs none).
func (k *kind) ref() int64 {
	if k.window {
		return k.hw.Ref(k.slack)
	}
	return 0
}

// step is the limiter's pure step on word w at now, read against ref. It
// also reports whether the next word must be written: an admission of
// n > 0 units (for a window, even one that leaves the word bit for bit the
// same, restamped a whole number of wraps on, unless now is at or before
// ref: packed64's rule).
func (k *kind) step(w uint64, now, ref, n int64) (uint64, limit.Result, bool, error) {
	if !k.window {
		s, r, err := k.g.Step(gcrastep.State(w), now, n)
		return uint64(s), r, r.OK && err == nil && n != 0, err
	}
	s, r, err := k.w.Step(packed64core.WindowState{Word: packed64core.WindowWord(w), Ref: ref}, now, n)
	next := uint64(s.Word)
	return next, r, r.OK && err == nil && n != 0 && !(next == w && now <= ref), err
}

// stepOne is step for n = 1 without the Result: the next word and whether
// the unit is admitted (which is then written).
func (k *kind) stepOne(w uint64, now, ref int64) (uint64, bool) {
	if !k.window {
		s, ok := k.g.StepOne(gcrastep.State(w), now)
		return uint64(s), ok
	}
	next, ok := k.w.StepOne(packed64core.WindowWord(w), now, ref)
	return uint64(next), ok
}

// gcraOne and gcraOneNs are stepOne for a GCRA, without kind's dispatch:
// a GCRA needs no reference time and raises nothing. gcraOneNs, for a step
// of one ns, inlines.
func (k *kind) gcraOne(w uint64, now int64) (uint64, bool) {
	s, ok := k.g.StepOne(gcrastep.State(w), now)
	return uint64(s), ok
}

func (k *kind) gcraOneNs(w uint64, now int64) (uint64, bool) {
	s, ok := k.g.StepOneNs(gcrastep.State(w), now)
	return uint64(s), ok
}

// windowOne is stepOne for a window word, raising the reference time if
// the unit is admitted: allow1's window path, out of its line so that the
// GCRA path keeps its values in registers.
func (k *kind) windowOne(w uint64, now int64) (uint64, bool) {
	ref := k.ref()
	next, ok := k.stepOne(w, now, ref)
	if ok {
		k.raise(now, ref)
	}
	return next, ok
}

// raise is called before writing a word stepped at now against ref.
func (k *kind) raise(now, ref int64) {
	if k.window && now > ref {
		k.hw.Raise(now, k.slack)
	}
}

// burst returns the most units one request may ask for.
func (k *kind) burst() int64 {
	if k.window {
		return k.w.Limit()
	}
	return k.g.Burst()
}

// signBit maps int64 time onto uint64 in the same order.
const signBit = 1 << 63

// owed returns what the key of word w still owes, ordered like time: for a
// GCRA its TAT (the state itself: a full bucket at any time after it); for
// a window, the time from which it counts nothing, sign-flipped so that
// unsigned order is time order; 0 for a word that owes nothing at any time.
func (k *kind) owed(w uint64, ref int64) uint64 {
	if !k.window {
		return w
	}
	s := packword.UnpackWindow(w)
	if s.Prev|s.Cur == 0 {
		return 0
	}
	end := addSat(k.unwrap(s.Start, ref>>k.shift), k.wu) // the end of the window after Prev
	if s.Cur != 0 {
		end = addSat(end, k.wu)
	}
	return uint64(k.ns(end)) ^ signBit
}

// paidBy returns the most a key may owe and owe nothing at now: a key
// owing o decides at now and after as a fresh one would iff o <=
// paidBy(now). For a GCRA that is a full bucket (every later decision from
// o and from 0 agree, as gcra restarts a TAT behind now at now); for a
// window, a window counting nothing (a debt at the end of time is never
// paid).
func (k *kind) paidBy(now int64) uint64 {
	if !k.window {
		return uint64(k.g.FullAt(now))
	}
	return min(uint64(now)^signBit, math.MaxUint64-1)
}

// wait returns the ns until a key owing o owes nothing, from now.
func (k *kind) wait(o uint64, now int64) time.Duration {
	if !k.window {
		_, r, _ := k.g.Step(gcrastep.State(o), now, k.g.Burst())
		return r.RetryAfter // 0 when admitted: paid
	}
	if t := int64(o ^ signBit); o != 0 && t > now {
		return until(t, now)
	}
	return 0
}

// start returns the word a key new to the table starts in at now, given
// the least value o the sketch holds for it, and the time before which it
// admits nothing (math.MinInt64 if none). A GCRA starts at TAT o, so it
// owes what the key it may be owed. A window owing until x starts as a
// window whose two counted windows end at x, each counting the whole
// limit: it admits nothing before x - W and then what the old word's
// count, decaying, would at most leave, since an evicted window owing
// until x counted its units in those two windows. A debt whose windows
// start after ref (where the word would not unwrap), or at the ends of
// time, admits nothing before x. A debt paid by now is none: a window
// counting nothing from x on decides as a fresh one (and an old x would
// not unwrap).
func (k *kind) start(o uint64, ref, now int64) (w uint64, notBefore int64) {
	if !k.window {
		return o, math.MinInt64
	}
	x := int64(o ^ signBit)
	if o == 0 || x <= now && x != math.MaxInt64 {
		return 0, math.MinInt64
	}
	xu := x >> k.shift
	if x == math.MaxInt64 || xu < math.MinInt64>>k.shift+2*k.wu || xu-2*k.wu > ref>>k.shift {
		return 0, x
	}
	lim := uint64(k.w.Limit())
	f := packword.WindowFields{Start: uint64(xu-2*k.wu) & k.mask, Prev: lim, Cur: lim}
	return packword.PackWindow(f), math.MinInt64
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
