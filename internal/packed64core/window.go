package packed64core

import (
	"math/bits"
	"sync/atomic"
	"time"

	"golang.org/x/sys/cpu"

	"github.com/cellrate/cellrate/internal/backoff"
	"github.com/cellrate/cellrate/internal/packword"
	"github.com/cellrate/cellrate/internal/slide"
	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/nanotime"
)

// WindowWord is a sliding-window counter in 64 bits:
//
//	bits 63..36  start  28 bits  the current window's start in units, modulo 2^28
//	bits 35..18  prev   18 bits  units admitted in the window before
//	bits 17..0   cur    18 bits  units admitted in the current window
//
// A time unit is 2^s ns (WindowParams.Unit), counted from the parameters'
// origin; a window is 4096 to 8192 units long (or its length in ns, if
// shorter). The zero word is an empty counter.
type WindowWord uint64

// The layout of a WindowWord, kept in internal/packword for keyed, which
// reads a word's fields.
const (
	windowStartBits = packword.WindowStartBits
	windowCountBits = packword.WindowCountBits
)

type windowFields = packword.WindowFields

// WindowState is what a counter's steps read and return: its word and a
// reference time for reading the word's wrapped start, at or after the
// time of the step that wrote it (see the package doc). A word never
// written (the zero word) may take any Ref, so the zero WindowState is an
// empty counter. Keep the whole WindowState, 16 bytes, and the steps keep
// Ref right; or keep only the 8-byte Word and one HighWater for many
// words, as Windows does, and build the state from both.
type WindowState struct {
	Word WindowWord
	Ref  int64
}

const countMask = 1<<windowCountBits - 1

func packWindow(f windowFields) WindowWord { return WindowWord(packword.PackWindow(f)) }

func unpackWindow(w WindowWord) windowFields { return packword.UnpackWindow(uint64(w)) }

// MaxWindowLimit is the largest limit a WindowWord counts.
const MaxWindowLimit = 1<<18 - 1

// MaxWindowLimit fills a count field.
var _ [0]struct{} = [MaxWindowLimit - (1<<windowCountBits - 1)]struct{}{}

// MaxWindow is the longest window, 2^62ns (about 146 years), which keeps
// two windows within int64 nanoseconds.
const MaxWindow = time.Duration(1) << 62

// windowUnitBits is the most bits a window's length takes in units: 13, so
// that f = e/W is known to 1 part in 4096 or better.
const windowUnitBits = 13

// WindowParams is a validated sliding-window counter: limit units per
// window of length window. The zero WindowParams admits nothing.
type WindowParams struct {
	clk clock
	r   slide.Rule // L and W in units
}

// NewWindowParams validates a counter of limit units per window. A
// parameter out of range is a *limit.ParamError: limit must be in
// [1, MaxWindowLimit] and window in [1ns, MaxWindow]. A window that is not a
// whole number of units is rounded up to one (by at most 1/4096).
func NewWindowParams(limit int64, window time.Duration) (WindowParams, error) {
	if limit < 1 || limit > MaxWindowLimit {
		return WindowParams{}, paramError("limit", limit, int64(1), int64(MaxWindowLimit))
	}
	if window < 1 || window > MaxWindow {
		return WindowParams{}, paramError("window", window, time.Duration(1), MaxWindow)
	}
	shift := uint8(max(0, bits.Len64(uint64(window))-windowUnitBits))
	wu := (uint64(window) + 1<<shift - 1) >> shift
	return WindowParams{clk: newClock(shift, windowStartBits), r: slide.New(uint64(limit), wu)}, nil
}

// Unit returns the time unit of the word's start field.
func (p WindowParams) Unit() time.Duration { return time.Duration(1) << p.clk.shift }

// Window returns the window length after rounding to whole units.
func (p WindowParams) Window() time.Duration { return time.Duration(p.r.W) << p.clk.shift }

// Wrap returns how long the start field takes to wrap: 2^28 units.
func (p WindowParams) Wrap() time.Duration { return p.clk.wrap() }

// Slack returns the HighWater slack for these parameters, in ns.
func (p WindowParams) Slack() int64 { return p.clk.slack }

// Limit returns the units admitted per window.
func (p WindowParams) Limit() int64 { return int64(p.r.L) }

// Step decides whether n units may be admitted at time now to the counter
// in s. It returns the state to keep if admitted (s itself, which need not
// be written, otherwise) and the Result, or limit.ErrNegativeCost or
// limit.ErrCostExceedsBurst with s and a Result whose RetryAfter is
// limit.Never. n = 0 is always admitted, with s unchanged and Remaining as
// of now. The state returned has a Ref at or after its word's write: now,
// or s.Ref if that is later.
func (p WindowParams) Step(s WindowState, now, n int64) (WindowState, limit.Result, error) {
	return p.step(s, now, n)
}

func (p *WindowParams) step(s WindowState, now, n int64) (WindowState, limit.Result, error) {
	if n < 0 {
		return s, limit.Result{RetryAfter: limit.Never}, limit.ErrNegativeCost
	}
	if uint64(n) > p.r.L {
		return s, limit.Result{RetryAfter: limit.Never}, limit.ErrCostExceedsBurst
	}
	if p.r.L == 0 {
		return s, limit.Result{OK: true}, nil // the zero WindowParams, n == 0
	}
	u, refU, un := p.clk.units(now), p.clk.units(s.Ref), uint64(n)
	if un != 0 {
		c, e, back := p.r.Advance(p.unwrap(s.Word, refU), u)
		if p.admits(c, e, back, un) {
			c.Count(back, un)
			return WindowState{p.word(c), nextRef(s.Ref, uint64(s.Word)&(1<<(2*windowCountBits)-1) == 0, now)},
				limit.Result{OK: true, Remaining: p.r.Remaining(c, e)}, nil
		}
	}
	d := p.r.Decide(p.unwrap(s.Word, refU), u, un)
	if !d.OK {
		return s, limit.Result{Remaining: d.Left, RetryAfter: time.Duration(p.clk.after(d.Base, int64(d.Off), now))}, nil
	}
	return s, limit.Result{OK: true, Remaining: d.Left}, nil // n == 0
}

// admits is the admission test: whether n units fit in the counter s,
// rotated by Advance to the decision's unit with e and back as Advance
// returned them (then Count records them). Step and the cells' AllowAt both
// decide here; it is small enough to inline into their loops. slide.Decide,
// which agrees with it, settles only what it refuses.
func (p *WindowParams) admits(s slide.State, e, back, n uint64) bool {
	return back <= p.r.W && p.r.Fits(s, e, n)
}

// unwrap returns the counter in w with its start unwrapped against refU,
// in units.
func (p *WindowParams) unwrap(w WindowWord, refU int64) slide.State {
	s := slide.State{Prev: uint64(w) >> windowCountBits & countMask, Cur: uint64(w) & countMask}
	if s.Prev|s.Cur != 0 {
		s.Start = p.clk.unwrap(uint64(w)>>(2*windowCountBits), refU)
	}
	return s
}

// word packs s, whose counts are at most the limit; the shift drops the
// start's bits above the field.
func (p *WindowParams) word(s slide.State) WindowWord {
	return WindowWord(uint64(s.Start)<<(2*windowCountBits) | s.Prev<<windowCountBits | s.Cur)
}

// EstimateAt returns the counter's estimate at now, Prev*(W-e)/W + Cur, for
// reading; decisions never use floating point.
func (p WindowParams) EstimateAt(s WindowState, now int64) float64 {
	if p.r.W == 0 {
		return 0
	}
	c, e, _ := p.r.Advance(p.unwrap(s.Word, p.clk.units(s.Ref)), p.clk.units(now))
	return p.r.Estimate(c, e)
}

// RemainingAt returns the whole units that fit at now: what Step would
// admit at most (0 for a now before the windows still counted).
func (p WindowParams) RemainingAt(s WindowState, now int64) int64 {
	_, r, _ := p.step(s, now, 0)
	return r.Remaining
}

// Undo gives back an admission at now at that moved the word from before
// to after. If s's word is still after (nothing admitted since, or
// everything admitted since given back) it returns s with the word before
// and true: the counter is as if that admission had never happened.
// Otherwise it returns s and false, as BucketParams.Undo does, and for the
// same reasons: later admissions were decided with the units counted; once
// s.Ref is half a wrap past at, another admission could have left the same
// bits; an admission that left the bits as they were gives back nothing.
func (p WindowParams) Undo(s WindowState, at int64, before, after WindowWord) (WindowState, bool) {
	if s.Word != after || !undoable(s.Ref, at, p.clk.wrap()) {
		return s, false
	}
	return WindowState{before, s.Ref}, true
}

// Window is a sliding-window counter in one atomic 64-bit word, safe for
// concurrent use. Its parameters and HighWater sit beside the word; Windows
// shares them among many words.
//
// The zero Window admits nothing; use NewWindow. A Window must not be
// copied after first use.
type Window struct {
	clock nanotime.Clock
	c     windowCell
}

// windowCell is a Window without its clock: no pointers, so that a test
// can run its denials on a read-only copy.
type windowCell struct {
	hw   HighWater
	p    WindowParams
	_    cpu.CacheLinePad // word's line holds nothing the reads of p and hw would miss on
	word atomic.Uint64
	_    cpu.CacheLinePad
}

func (c *windowCell) AllowAt(now int64) bool { return c.p.allow(&c.word, &c.hw, now) }

func (c *windowCell) AllowNAt(now, n int64) (limit.Result, error) {
	return c.p.allowN(&c.word, &c.hw, now, n)
}

var _ limit.Member = (*Window)(nil)

// NewWindow returns an empty Window admitting limit units per window. A
// parameter out of range is a *limit.ParamError (see NewWindowParams).
func NewWindow(limit int64, window time.Duration, opts ...Option) (*Window, error) {
	c := new(Window)
	if err := c.Init(limit, window, opts...); err != nil {
		return nil, err
	}
	return c, nil
}

// Init makes c what NewWindow returns, in place; c must not be in use.
func (c *Window) Init(limit int64, window time.Duration, opts ...Option) error {
	p, err := NewWindowParams(limit, window)
	if err != nil {
		return err
	}
	cfg, err := newConfig(opts)
	if err != nil {
		return err
	}
	c.clock, c.c.p = cfg.clock, p
	return nil
}

// Params returns the counter's parameters.
func (c *Window) Params() WindowParams { return c.c.p }

// now reads the counter's clock (nanotime.Now for the zero Window).
func (c *Window) now() int64 { return readClock(c.clock) }

// Allow is AllowAt with the counter's clock.
func (c *Window) Allow() bool { return c.AllowAt(c.now()) }

// AllowAt reports whether one unit may be admitted at time now, and admits
// it if so.
func (c *Window) AllowAt(now int64) bool { return c.c.AllowAt(now) }

// AllowN is AllowNAt with the counter's clock.
func (c *Window) AllowN(n int64) (limit.Result, error) { return c.AllowNAt(c.now(), n) }

// AllowNAt admits n units at time now if all n fit.
func (c *Window) AllowNAt(now, n int64) (limit.Result, error) { return c.c.AllowNAt(now, n) }

// TakeAt is AllowNAt that also returns, when it admits n > 0, the Receipt
// Refund needs to give the units back (limit.Member).
func (c *Window) TakeAt(now, n int64) (limit.Result, limit.Receipt, error) {
	return c.c.p.run(&c.c.word, &c.c.hw, now, n)
}

// Refund gives back the units of the admission that returned rc (see
// limit.Member and WindowParams.Undo): exactly when the word is still the
// one that admission stored, when no other unit was admitted since or all
// admitted since were given back; otherwise nothing. Put a Window that many
// callers share last in an limit.All, where it is never refunded.
//
// The word's reference time goes back with it while it is still the one
// that admission left, so a refunded admission far ahead of the clock
// leaves no trace; for the instant a Refund takes, a decision on the Window
// is denied (RetryAfter 1ns) and a read waits.
func (c *Window) Refund(rc limit.Receipt) {
	if rc.N == 0 {
		return
	}
	p := &c.c.p
	refundCell(&c.c.word, &c.c.hw, rc, p.clk.slack, func(w uint64, ref int64) bool {
		_, ok := p.Undo(WindowState{WindowWord(w), ref}, rc.At, WindowWord(rc.Before[0]), WindowWord(rc.After[0]))
		return ok
	})
}

// Estimate is EstimateAt with the counter's clock.
func (c *Window) Estimate() float64 { return c.EstimateAt(c.now()) }

// EstimateAt returns the estimated units admitted in the window ending at now.
func (c *Window) EstimateAt(now int64) float64 {
	return c.c.p.EstimateAt(c.c.p.state(&c.c.word, &c.c.hw), now)
}

// Remaining is RemainingAt with the counter's clock.
func (c *Window) Remaining() int64 { return c.RemainingAt(c.now()) }

// RemainingAt returns the whole units that fit at now.
func (c *Window) RemainingAt(now int64) int64 {
	return c.c.p.RemainingAt(c.c.p.state(&c.c.word, &c.c.hw), now)
}

// state loads a cell's word, then its reference (see HighWater).
func (p *WindowParams) state(word *atomic.Uint64, hw *HighWater) WindowState {
	w, ref := hw.read(word, p.clk.slack)
	return WindowState{WindowWord(w), ref}
}

// allow admits one unit to word, with the reference time kept in hw. The
// high-water mark is loaded after the word, and raised before the word is
// written (see HighWater). Its loop and allowN's are written out around the
// same admission test and step that Step runs, as BucketParams.allow's are.
func (p *WindowParams) allow(word *atomic.Uint64, hw *HighWater, now int64) bool {
	if p.r.L == 0 {
		return false
	}
	u := p.clk.units(now)
	var spin backoff.Spin
	for ; ; spin.Wait() {
		old := word.Load()
		ref, free := hw.load(p.clk.slack)
		if !free {
			return false // a Refund is putting the word back
		}
		s, e, back := p.r.Advance(p.unwrap(WindowWord(old), p.clk.units(ref)), u)
		// admits, written out: not inlined (its cost is 88 of the inliner's
		// 80), the call cost 5-9% of AllowAt's CPU time in one run.
		if back > p.r.W || !p.r.Fits(s, e, 1) {
			return false
		}
		s.Count(back, 1)
		if now > ref && !hw.raise(now, p.clk.slack) {
			return false
		}
		if word.CompareAndSwap(old, uint64(p.word(s))) {
			return true
		}
	}
}

// allowN runs step on word, raising the mark as BucketParams.run does.
func (p *WindowParams) allowN(word *atomic.Uint64, hw *HighWater, now, n int64) (limit.Result, error) {
	r, _, err := p.run(word, hw, now, n)
	return r, err
}

// run runs step on word and returns, with its result, the Receipt of what
// it wrote: the words and the raw marks just before and just after (the
// zero Receipt when it wrote nothing). The raise comes after the step and
// before the CAS that publishes the word; a raise whose CAS then fails is
// harmless, as a higher mark never lets a word admit more (see HighWater).
// While a Refund holds the mark it decides nothing (busy).
func (p *WindowParams) run(word *atomic.Uint64, hw *HighWater, now, n int64) (limit.Result, limit.Receipt, error) {
	var spin backoff.Spin
	for ; ; spin.Wait() {
		old := word.Load()
		mark := hw.t.Load()
		if mark == locked {
			r, err := p.busy(n)
			return r, limit.Receipt{}, err
		}
		ref := addSat(mark^bias, p.clk.slack)
		next, r, err := p.step(WindowState{WindowWord(old), ref}, now, n)
		if !writes(r, err, n, uint64(next.Word) == old, now, ref) {
			return r, limit.Receipt{}, err
		}
		if now > ref && !hw.raise(now, p.clk.slack) {
			r, err := p.busy(n)
			return r, limit.Receipt{}, err
		}
		if word.CompareAndSwap(old, uint64(next.Word)) {
			after := uint64(hw.t.Load())
			return r, limit.Receipt{At: now, N: n, Before: [2]uint64{old, uint64(mark)}, After: [2]uint64{uint64(next.Word), after}}, nil
		}
	}
}

// busy is the decision while a Refund holds the mark: the errors of an n
// no decision admits, n == 0 admitted, and otherwise a denial for the
// instant the Refund lasts.
func (p *WindowParams) busy(n int64) (limit.Result, error) {
	switch {
	case n < 0:
		return limit.Result{RetryAfter: limit.Never}, limit.ErrNegativeCost
	case uint64(n) > uint64(p.r.L):
		return limit.Result{RetryAfter: limit.Never}, limit.ErrCostExceedsBurst
	case n == 0:
		return limit.Result{OK: true}, nil
	}
	return limit.Result{RetryAfter: 1}, nil
}
