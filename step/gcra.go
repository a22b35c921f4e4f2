package step

import (
	"errors"
	"time"

	"github.com/cellrate/cellrate/internal/gcrastep"
	"github.com/cellrate/cellrate/limit"
)

// GCRA is the rate and burst of package gcra's limiter, for its steps.
type GCRA struct{ p gcrastep.Params }

// GCRAState is a GCRA's whole state: its theoretical arrival time, in the
// steps of its GCRA. The zero GCRAState is a full limiter.
type GCRAState uint64

// NewGCRA returns the GCRA of events per period on average and at most
// burst at once, with gcra.New's limits and errors.
func NewGCRA(events int64, period time.Duration, burst int64) (GCRA, error) {
	p, err := gcrastep.NewParams(events, period, burst)
	return GCRA{p}, restamp(err)
}

// Step decides a request of n events at now on state s: the state to store
// and the Result. n < 0 returns limit.ErrNegativeCost and n > burst
// limit.ErrCostExceedsBurst, each with a Result that is not OK and
// RetryAfter limit.Never; n == 0 is admitted and changes nothing.
func (g GCRA) Step(s GCRAState, now, n int64) (GCRAState, limit.Result, error) {
	next, r, err := g.p.Step(gcrastep.State(s), now, n)
	return GCRAState(next), r, err
}

// StepOne is Step for n = 1 when only the decision is wanted: the state to
// store and whether one event is admitted, decided exactly as Step decides
// it, without computing a Result.
func (g GCRA) StepOne(s GCRAState, now int64) (GCRAState, bool) {
	next, ok := g.p.StepOne(gcrastep.State(s), now)
	return GCRAState(next), ok
}

// Burst returns the most events admitted at once.
func (g GCRA) Burst() int64 { return g.p.Burst() }

// Interval returns period/events rounded down to a whole nanosecond: the
// time one event takes to refill.
func (g GCRA) Interval() time.Duration { return g.p.Interval() }

// restamp names this package in a constructor's *limit.ParamError.
func restamp(err error) error {
	var pe *limit.ParamError
	if errors.As(err, &pe) {
		e := *pe
		e.Pkg = "step"
		return &e
	}
	return err
}
