// Package wait is the body of the limiters' Wait methods (gcra, bucket):
// reserve at once, then sleep on a timer until the time to act, cancelling
// the reservation if the context ends first or its deadline comes too soon.
package wait

import (
	"context"
	"time"
)

// For runs a Wait. It returns ctx.Err() if ctx is already done; otherwise
// it calls reserve(now) with now from clock. reserve returns the
// reservation's wait in nanoseconds, whether it was granted, and an error:
// For returns the error, or refused when it was not granted, or nil when the
// wait is 0. If ctx's deadline is sooner than the wait, For calls
// cancel(now) and returns deadline without blocking; if ctx ends during the
// wait, it calls cancel(clock()) and returns ctx.Err(). Its timer is
// stopped on every path. For keeps none of its funcs, so closures passed to
// it need not escape.
func For(ctx context.Context, clock func() int64, reserve func(now int64) (wait int64, ok bool, err error), cancel func(now int64), refused, deadline error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	now := clock()
	w, ok, err := reserve(now)
	if err != nil {
		return err
	}
	if !ok {
		return refused
	}
	if w == 0 {
		return nil
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < time.Duration(w) {
		cancel(now)
		return deadline
	}
	tm := time.NewTimer(time.Duration(w))
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		cancel(clock())
		return ctx.Err()
	}
}
