package packed64

import (
	"time"

	"github.com/cellrate/cellrate/internal/packed64core"
	"github.com/cellrate/cellrate/limit"
)

// Window is a sliding-window counter in one atomic 64-bit word, safe for
// concurrent use.
//
// The zero Window admits nothing; use NewWindow. A Window must not be
// copied after first use (go vet reports copies).
type Window struct {
	_ noCopy
	w packed64core.Window
}

var _ limit.Member = (*Window)(nil)

// NewWindow returns an empty Window admitting limit units per window. A
// parameter out of range is a *limit.ParamError: limit must be in
// [1, 262143] and window in [1ns, 2^62ns]. A window that is not a whole
// number of the word's time units is rounded up to one (by at most 1/4096).
func NewWindow(limit int64, window time.Duration, opts ...Option) (*Window, error) {
	o, err := core(opts)
	if err != nil {
		return nil, err
	}
	w := new(Window)
	if err := w.w.Init(limit, window, o...); err != nil {
		return nil, err
	}
	return w, nil
}

// Allow is AllowAt with the counter's clock.
func (w *Window) Allow() bool { return w.w.Allow() }

// AllowAt reports whether one unit may be counted at time now, and counts
// it if so.
func (w *Window) AllowAt(now int64) bool { return w.w.AllowAt(now) }

// AllowN is AllowNAt with the counter's clock.
func (w *Window) AllowN(n int64) (limit.Result, error) { return w.w.AllowN(n) }

// AllowNAt counts n units at time now if all n fit. n < 0 returns
// limit.ErrNegativeCost and n > limit limit.ErrCostExceedsBurst; n == 0
// counts nothing and reports what remains.
func (w *Window) AllowNAt(now, n int64) (limit.Result, error) { return w.w.AllowNAt(now, n) }

// TakeAt is AllowNAt that also returns, when it admits n > 0, the Receipt
// Refund needs to give the units back (limit.Member).
func (w *Window) TakeAt(now, n int64) (limit.Result, limit.Receipt, error) {
	return w.w.TakeAt(now, n)
}

// Refund gives back the units of the admission that returned rc, under
// Bucket.Refund's rule.
func (w *Window) Refund(rc limit.Receipt) { w.w.Refund(rc) }
