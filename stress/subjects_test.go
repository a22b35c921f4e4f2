package stress

import (
	"time"

	"github.com/cellrate/cellrate/gcra"
	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/window"
)

// windowSubject: a sliding-window counter admits at most limit units per
// fixed window and its windows tile time, so any stretch T meets at most
// T/W + 2 of them: Burst 2*limit, Rate limit/W.
func windowSubject(name string, lim int64, w time.Duration) Subject {
	p, err := window.NewParams(lim, w)
	if err != nil {
		panic(err)
	}
	return Subject{
		Name: name,
		New: func() limit.Limiter {
			l, err := window.New(lim, w)
			if err != nil {
				panic(err)
			}
			return l
		},
		MaxN: lim, Burst: 2 * lim, Rate: RatePer(lim, w),
		Init: window.State{},
		Step: func(s any, now, n int64) (any, limit.Result, error) { return p.Step(s.(window.State), now, n) },
	}
}

func init() {
	subjects = append(subjects,
		windowSubject("window-1-per-1ns", 1, 1),
		windowSubject("window-1000-per-1s", 1000, time.Second),
		windowSubject("window-max-per-292y", window.MaxLimit, time.Duration(1<<63-1)),
		windowSubject("window-7-per-3s", 7, 3*time.Second),
	)
}

// gcraSubject: GCRA promises Burst + Rate*T over any interval of the
// times it is given, in any order.
func gcraSubject(name string, events int64, period time.Duration, burst int64) Subject {
	p, err := gcra.NewParams(events, period, burst)
	if err != nil {
		panic(err)
	}
	return Subject{
		Name: name,
		New: func() limit.Limiter {
			l, err := gcra.New(events, period, burst)
			if err != nil {
				panic(err)
			}
			return l
		},
		MaxN: burst, Burst: burst, Rate: RatePer(events, period), GivenTimes: true,
		Init: uint64(0),
		Step: func(s any, now, n int64) (any, limit.Result, error) { return p.Step(s.(uint64), now, n) },
	}
}

func init() {
	subjects = append(subjects,
		gcraSubject("gcra-1-per-1ns", 1, 1, 1),
		gcraSubject("gcra-1000-per-1s-burst-50", 1000, time.Second, 50),
		gcraSubject("gcra-3-per-1s-burst-7", 3, time.Second, 7),
		gcraSubject("gcra-1-per-146y", 1, time.Duration(1<<62), 1),
	)
}
