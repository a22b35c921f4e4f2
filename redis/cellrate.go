package redis

// Every use of the main module's API is in this file, so that a change
// there is a change here only (but limit.Result, named in the exported
// signatures).

import (
	"sync/atomic"
	"time"

	"github.com/cellrate/cellrate/gcra"
	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/nanotime"
	"github.com/cellrate/cellrate/step"
	"github.com/cellrate/cellrate/window"
)

// result is the outcome of one decision.
type result = limit.Result

// never is the RetryAfter of a request that can never be admitted.
const never = limit.Never

var (
	errNegativeCost     = limit.ErrNegativeCost
	errCostExceedsBurst = limit.ErrCostExceedsBurst
)

type paramErr = limit.ParamError

func paramError(param string, value, min, max any, reason string) error {
	return &limit.ParamError{Pkg: "redis", Param: param, Value: value, Min: min, Max: max, Reason: reason}
}

// The Go steps the scripts are the same as (used by the tests).

type goGCRA = step.GCRA

func newGoGCRA(events int64, period time.Duration, burst int64) (goGCRA, error) {
	return step.NewGCRA(events, period, burst)
}

func stepGoGCRA(ps goGCRA, tat uint64, now, n int64) (uint64, result, error) {
	next, r, err := ps.Step(step.GCRAState(tat), now, n)
	return uint64(next), r, err
}

type goWindow = window.Params
type goWindowState = window.State

func newGoWindow(lim int64, w time.Duration) (goWindow, error) { return window.NewParams(lim, w) }

func stepGoWindow(ps goWindow, s goWindowState, now, n int64) (goWindowState, result, error) {
	return ps.Step(s, now, n)
}

// monotonic is the local clock of the two-tier limiter's leases.
func monotonic() int64 { return nanotime.Now() }

// localLimiter is the fail-open fallback of a two-tier limiter: a
// process-local GCRA, its burst, and the two-tier rate it follows.
type localLimiter struct {
	l     *gcra.Limiter
	burst int64
	rate  atomic.Pointer[tierRate]
}

func newLocalLimiter(events int64, period time.Duration, burst int64) (*localLimiter, error) {
	l, err := gcra.New(events, period, burst)
	if err != nil {
		return nil, err
	}
	return &localLimiter{l: l, burst: burst}, nil
}

func localAllow(l *localLimiter, now, n int64) (result, error) { return l.l.AllowNAt(now, n) }

func localBurst(l *localLimiter) int64 { return l.burst }

func localSetRate(l *localLimiter, now int64, perSecond float64) error {
	return l.l.SetRateAt(now, perSecond)
}
