package packed64

import (
	"fmt"
	"math/bits"
	"sync/atomic"
	"time"

	"golang.org/x/sys/cpu"

	"github.com/cellrate/cellrate/internal/backoff"
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

// Field widths of a WindowWord.
const (
	WindowStartBits = 28
	WindowCountBits = 18
)

// WindowState is a WindowWord's fields. Start is below 2^28, Prev and Cur
// below 2^18.
type WindowState struct {
	Start     uint64
	Prev, Cur uint64
}

const countMask = 1<<WindowCountBits - 1

// PackWindow returns the word holding s; bits beyond the field widths are
// dropped.
func PackWindow(s WindowState) WindowWord {
	return WindowWord(s.Start<<(2*WindowCountBits) | (s.Prev&countMask)<<WindowCountBits | s.Cur&countMask)
}

// UnpackWindow returns the fields of w.
func UnpackWindow(w WindowWord) WindowState {
	return WindowState{Start: uint64(w) >> (2 * WindowCountBits), Prev: uint64(w) >> WindowCountBits & countMask, Cur: uint64(w) & countMask}
}

// MaxWindowLimit is the largest limit a WindowWord counts.
const MaxWindowLimit = 1<<WindowCountBits - 1

// MaxWindow is the longest window, 2^62ns (about 146 years), which keeps
// two windows within int64 nanoseconds.
const MaxWindow = time.Duration(1) << 62

// windowUnitBits is the most bits a window's length takes in units: 13, so
// that f = e/W is known to 1 part in 4096 or better.
const windowUnitBits = 13

// WindowParams is a validated sliding-window counter: limit units per
// window of length window, time counted from origin. The zero WindowParams
// admits nothing.
type WindowParams struct {
	clk clock
	r   slide.Rule // L and W in units
}

// NewWindowParams validates a counter of limit units per window, with time
// units counted from origin (any fixed time; 0 for nanotime). limit must be
// in [1, MaxWindowLimit] and window in [1ns, MaxWindow]. A window that is
// not a whole number of units is rounded up to one (by at most 1/4096).
func NewWindowParams(limit int64, window time.Duration, origin int64) (WindowParams, error) {
	if limit < 1 || limit > MaxWindowLimit {
		return WindowParams{}, fmt.Errorf("packed64: limit must be in [1, %d], got %d", MaxWindowLimit, limit)
	}
	if window < 1 || window > MaxWindow {
		return WindowParams{}, fmt.Errorf("packed64: window must be in [1ns, %v], got %v", MaxWindow, window)
	}
	shift := uint8(max(0, bits.Len64(uint64(window))-windowUnitBits))
	wu := (uint64(window) + 1<<shift - 1) >> shift
	return WindowParams{clk: newClock(origin, shift, WindowStartBits), r: slide.New(uint64(limit), wu)}, nil
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

// Step decides whether n units may be admitted at time now from the counter
// in w, ref being at or after the time of the step that wrote w (see the
// package doc; a word never written may take any ref). It returns the word
// to store if admitted (w itself, which need not be written, otherwise) and
// the Result, or limit.ErrNegativeCost or limit.ErrCostExceedsBurst with w
// and a Result whose RetryAfter is limit.Never. n = 0 is always admitted,
// with w unchanged and Remaining as of now.
func (p *WindowParams) Step(w WindowWord, now, ref, n int64) (WindowWord, limit.Result, error) {
	if n < 0 {
		return w, limit.Result{RetryAfter: limit.Never}, limit.ErrNegativeCost
	}
	if uint64(n) > p.r.L {
		return w, limit.Result{RetryAfter: limit.Never}, limit.ErrCostExceedsBurst
	}
	if p.r.L == 0 {
		return w, limit.Result{OK: true}, nil // the zero WindowParams, n == 0
	}
	// An admission, the common case, is decided here, inlined; Decide
	// settles the rest.
	u, un := p.clk.units(now), uint64(n)
	s, e, back := p.r.Advance(p.unwrap(w, p.clk.units(ref)), u)
	if un != 0 && back <= p.r.W && p.r.Fits(s, e, un) {
		s.Count(back, un)
		return p.word(s), limit.Result{OK: true, Remaining: p.r.Remaining(s, e)}, nil
	}
	d := p.r.Decide(p.unwrap(w, p.clk.units(ref)), u, un)
	switch {
	case !d.OK:
		return w, limit.Result{Remaining: d.Left, RetryAfter: p.clk.after(d.Base, int64(d.Off), now)}, nil
	case n == 0:
		return w, limit.Result{OK: true, Remaining: d.Left}, nil
	}
	return p.word(d.Next), limit.Result{OK: true, Remaining: d.Left}, nil
}

// unwrap returns the counter in w with its start unwrapped against refU,
// in units.
func (p *WindowParams) unwrap(w WindowWord, refU int64) slide.State {
	s := slide.State{Prev: uint64(w) >> WindowCountBits & countMask, Cur: uint64(w) & countMask}
	if s.Prev|s.Cur != 0 {
		s.Start = p.clk.unwrap(uint64(w)>>(2*WindowCountBits), refU)
	}
	return s
}

// word packs s, whose counts are at most the limit; the shift drops the
// start's bits above the field.
func (p *WindowParams) word(s slide.State) WindowWord {
	return WindowWord(uint64(s.Start)<<(2*WindowCountBits) | s.Prev<<WindowCountBits | s.Cur)
}

// EstimateAt returns the counter's estimate at now, Prev*(W-e)/W + Cur, for
// reading; decisions never use floating point.
func (p WindowParams) EstimateAt(w WindowWord, now, ref int64) float64 {
	if p.r.W == 0 {
		return 0
	}
	s, e, _ := p.r.Advance(p.unwrap(w, p.clk.units(ref)), p.clk.units(now))
	return p.r.Estimate(s, e)
}

// Window is a sliding-window counter in one atomic 64-bit word, safe for
// concurrent use. Its parameters and HighWater sit beside the word; Windows
// shares them among many words.
//
// The zero Window admits nothing; use NewWindow. A Window must not be
// copied after first use.
type Window struct {
	hw   HighWater
	p    WindowParams
	_    cpu.CacheLinePad // word's line holds nothing the reads of p and hw would miss on
	word atomic.Uint64
	_    cpu.CacheLinePad
}

var _ limit.Limiter = (*Window)(nil)

// NewWindow returns an empty Window admitting limit units per window,
// counting time from 0 (nanotime's clock). See NewWindowParams for the
// bounds.
func NewWindow(limit int64, window time.Duration) (*Window, error) {
	p, err := NewWindowParams(limit, window, 0)
	if err != nil {
		return nil, err
	}
	return &Window{p: p}, nil
}

// Params returns the counter's parameters.
func (c *Window) Params() WindowParams { return c.p }

// Allow is AllowAt(nanotime.Now()).
func (c *Window) Allow() bool { return c.AllowAt(nanotime.Now()) }

// AllowAt reports whether one unit may be admitted at time now, and admits
// it if so.
func (c *Window) AllowAt(now int64) bool { return c.p.allow(&c.word, &c.hw, now) }

// AllowN is AllowNAt(nanotime.Now(), n).
func (c *Window) AllowN(n int64) (limit.Result, error) { return c.AllowNAt(nanotime.Now(), n) }

// AllowNAt admits n units at time now if all n fit.
func (c *Window) AllowNAt(now, n int64) (limit.Result, error) {
	return c.p.allowN(&c.word, &c.hw, now, n)
}

// Estimate is EstimateAt(nanotime.Now()).
func (c *Window) Estimate() float64 { return c.EstimateAt(nanotime.Now()) }

// EstimateAt returns the estimated units admitted in the window ending at now.
func (c *Window) EstimateAt(now int64) float64 {
	w := WindowWord(c.word.Load())
	return c.p.EstimateAt(w, now, c.hw.Ref(c.p.clk.slack))
}

// allow admits one unit to word, with the reference time kept in hw. The
// high-water mark is loaded after the word, and raised before the word is
// written (see HighWater).
func (p *WindowParams) allow(word *atomic.Uint64, hw *HighWater, now int64) bool {
	if p.r.L == 0 {
		return false
	}
	u := p.clk.units(now)
	var spin backoff.Spin
	for ; ; spin.Wait() {
		old := word.Load()
		ref := hw.Ref(p.clk.slack)
		s, e, back := p.r.Advance(p.unwrap(WindowWord(old), p.clk.units(ref)), u)
		if back > p.r.W || !p.r.Fits(s, e, 1) {
			return false
		}
		s.Count(back, 1)
		if now > ref {
			hw.Raise(now, p.clk.slack)
		}
		if word.CompareAndSwap(old, uint64(p.word(s))) {
			return true
		}
	}
}

func (p *WindowParams) allowN(word *atomic.Uint64, hw *HighWater, now, n int64) (limit.Result, error) {
	var spin backoff.Spin
	for ; ; spin.Wait() {
		old := word.Load()
		ref := hw.Ref(p.clk.slack)
		next, r, err := p.Step(WindowWord(old), now, ref, n)
		// An admission that leaves the same bits (a whole number of wraps
		// on) still restamps the word at now: unless ref already covers
		// now, the mark must rise and the CAS confirm the word after it.
		if !r.OK || err != nil || n == 0 || uint64(next) == old && now <= ref {
			return r, err
		}
		hw.Raise(now, p.clk.slack)
		if word.CompareAndSwap(old, uint64(next)) {
			return r, nil
		}
	}
}
