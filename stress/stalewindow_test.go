package stress

import (
	"time"

	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/window"
)

// staleWindowSubject is windowSubject's bound on window's counter under the
// slide rule before a625813, broken on purpose: a now before the window's
// start was decided as at the start and counted in the current window,
// however far back it was. The real step runs on the stale now clamped to
// the start, under a mutex.
func staleWindowSubject(lim int64, w time.Duration) Subject {
	s := windowSubject("stale-in-current-window", lim, w)
	s.New = func() limit.Limiter {
		p := must(window.NewParams(lim, w))
		return &locked[window.State]{step: func(s window.State, now, n int64) (window.State, limit.Result, error) {
			if s.Prev|s.Cur != 0 {
				now = max(now, s.Start)
			}
			return p.Step(s, now, n)
		}}
	}
	s.Init, s.Step = nil, nil
	return s
}
