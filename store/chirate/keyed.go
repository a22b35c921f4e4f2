package chirate

import (
	"errors"
	"time"

	"github.com/cellrate/cellrate/keyed"
	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/step"
)

// MaxCount is the most a key's current and previous windows may count
// together: the limit of a keyed sliding-window counter.
const MaxCount = step.MaxPackedWindowLimit

// ErrFull is returned by IncrementBy for a new key when its slots all hold
// keys whose windows still count something (the table refuses, so no
// count is ever lost).
var ErrFull = keyed.ErrFull

// table is a keyed table of sliding-window counters used as exact
// per-window counts: every use this package makes of package keyed is in
// this file.
//
// Each window of httprate's is window index i, and the table sees it at
// time i*unit, the start of its own i-th window. At the start of a window
// a keyed counter's estimate weighs the window before in full, so it is
// the sum of the two windows' counts, and at the start of the next window
// it is the current window's count alone: two reads give both counts,
// exactly. With the limit at MaxCount, the counter admits every increment
// that keeps that sum within MaxCount.
type table struct {
	t    *keyed.Table
	unit int64 // the table's window, ns: the window rounded up to its time unit
}

func newTable(window time.Duration, capacity int) (*table, error) {
	p, err := step.NewPackedWindow(MaxCount, window)
	if err != nil {
		return nil, err
	}
	t, err := keyed.NewWindow(MaxCount, window, keyed.WithCapacity(capacity), keyed.WithRefuse())
	if err != nil {
		return nil, err
	}
	return &table{t: t, unit: int64(p.Window())}, nil
}

// add counts n more for key in window i; ok is false, counting nothing, if
// the two windows would count more than MaxCount (n alone included).
func (t *table) add(key string, i, n int64) (ok bool, err error) {
	r, err := t.t.AllowNAt(key, i*t.unit, n)
	switch {
	case errors.Is(err, keyed.ErrFull):
		return false, ErrFull
	case errors.Is(err, limit.ErrCostExceedsBurst):
		return false, nil
	case err != nil:
		return false, err
	}
	return r.OK, nil
}

// counts returns key's counts in window i and in window i-1. The current
// count is read first: an increment landing between the two reads is
// then counted once more in prev, never less (an estimate too high,
// never too low).
func (t *table) counts(key string, i int64) (curr, prev int64) {
	curr = MaxCount - t.t.RemainingAt(key, (i+1)*t.unit)
	both := MaxCount - t.t.RemainingAt(key, i*t.unit)
	return curr, both - curr
}
