package pacer

import (
	"errors"
	"time"

	"github.com/cellrate/cellrate/internal/gcrastep"
	"github.com/cellrate/cellrate/limit"
)

// This file is the pacer's only use of package gcra: a schedule is a GCRA
// of burst 1+slack whose TAT is the pacer's cell.

// schedule is the GCRA a Pacer's slots come from: ps of burst 1+slack, and
// push, the same rate with one more unit of burst (same TAT units: the
// burst does not change them), used to push the TAT by exactly one event.
type schedule struct{ ps, push gcrastep.Params }

// newSchedule returns the schedule of events per period with slack. A
// refusal of gcra's is returned as the pacer's own parameter error.
func newSchedule(events int64, period time.Duration, slack int64) (schedule, error) {
	ps, err := gcrastep.NewParams(events, period, 1+slack)
	var push gcrastep.Params
	if err == nil {
		push, err = gcrastep.NewParams(events, period, 2+slack)
	}
	if err != nil {
		var pe *limit.ParamError
		if errors.As(err, &pe) {
			e := *pe
			e.Pkg = "pacer"
			if e.Param == "burst" {
				e.Param = "slack"
			}
			return schedule{}, &e
		}
		return schedule{}, &limit.ParamError{Pkg: "pacer", Param: "events", Value: events, Reason: err.Error()}
	}
	return schedule{ps: ps, push: push}, nil
}

// reserve is the pacer's step: it takes the first slot at or after now
// that the GCRA admits, and returns the TAT to store and the wait until the
// slot. ok is false only at the end of int64 time.
//
// The wait is ps's RetryAfter, which is exact (Step admits at now+wait).
// The TAT must then move by exactly one event. Stepping ps at now+wait
// would not do that when the slot is the TAT itself rounded up to a whole
// ns (slack 0 and a fractional interval): the TAT would be behind that now,
// an idle restart, and each slot would lose up to a step (up to 2 ns) of
// schedule, drifting. So the push is push's admission at now+wait-1 ns,
// which lies in [TAT - (1+slack)*T, TAT]: inside push's tolerance and not
// after the TAT, where an admission adds exactly one event to the TAT.
//
// That is why this is not gcrastep's Params.Reserve, which is Step at
// now+wait: it keeps gcra's exact bound, under which slots of a burst of 1
// must be whole ns at least T apart, so they drift by up to ceil(T)-T and
// the restart's step each (see gcra's package doc). The pacer keeps the
// rate instead, with 1 ns of slack in its bound.
func (s schedule) reserve(tat uint64, now int64) (next uint64, wait int64, ok bool) {
	n, r, _ := s.ps.Step(gcrastep.State(tat), now, 1)
	if r.OK {
		return uint64(n), 0, true
	}
	w := int64(r.RetryAfter)
	if r.RetryAfter == limit.Never || now > int64(limit.Never)-w {
		return tat, 0, false
	}
	n, r2, _ := s.push.Step(gcrastep.State(tat), now+w-1, 1)
	return uint64(n), w, r2.OK
}
