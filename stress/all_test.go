package stress

import (
	"math/big"
	"time"

	"github.com/cellrate/cellrate/gcra"
	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/packed64"
	"github.com/cellrate/cellrate/step"
	"github.com/cellrate/cellrate/window"
)

// allSubject: an All of a GCRA and a sliding window (in the order given)
// admits only what both admit, and gives back exactly what the first took
// when the second denies, or nothing: every admission is one of each
// member's, so each member's bound holds over them. The subject checks the
// tighter member's bound, and has no model: a refund that another decision
// came between gives nothing back, so the composition is not a pure
// function of its requests. The first member's burst is the smallest, so
// every cost above it is refused with limit.ErrCostExceedsBurst (see
// limit.All.AllowNAt).
func allSubject(name string, events int64, period time.Duration, burst, lim int64, w time.Duration, windowFirst bool) Subject {
	s := Subject{
		Name: name,
		New: func() limit.Limiter {
			var ms []limit.Member
			g := must(gcra.New(events, period, burst))
			win := must(window.New(lim, w))
			if windowFirst {
				ms = []limit.Member{win, g}
			} else {
				ms = []limit.Member{g, win}
			}
			return must(limit.NewAll(ms...))
		},
		MaxN: min(burst, lim), GivenTimes: true,
	}
	// The tighter bound over a long interval: the lower rate.
	gr, wr := RatePer(events, period), RatePer(lim, w)
	if gr.Cmp(wr) <= 0 {
		s.Burst, s.Rate = burst, gr
	} else {
		s.Burst, s.Rate, s.Window = 2*lim, wr, w
	}
	return s
}

func init() {
	subjects = append(subjects,
		allSubject("all-gcra-3-per-1s-burst-7-then-window-50-per-1s", 3, time.Second, 7, 50, time.Second, false),
		allSubject("all-gcra-3-per-1s-burst-5-then-window-5-per-1s", 3, time.Second, 5, 5, time.Second, false),
		allSubject("all-window-7-per-3s-then-gcra-1000-per-1s-burst-50", 1000, time.Second, 50, 7, 3*time.Second, true),
	)
}

// packedAllSubject: an All of a packed64 Bucket and a packed64 Window, the
// window first (often denying, so the bucket is refunded) or last; the
// bucket's rate is the lower, so its bound (with its two time units) is
// the subject's.
func packedAllSubject(name string, events int64, period time.Duration, burst, lim int64, w time.Duration, windowFirst bool) Subject {
	p := must(step.NewPackedBucket(events, period, burst))
	rate := RatePer(events, period)
	return Subject{
		Name: name,
		New: func() limit.Limiter {
			b := must(packed64.NewBucket(events, period, burst))
			win := must(packed64.NewWindow(lim, w))
			if windowFirst {
				return must(limit.NewAll(win, b))
			}
			return must(limit.NewAll(b, win))
		},
		MaxN: min(burst, lim), GivenTimes: true, Burst: burst, Rate: rate,
		Extra: new(big.Rat).Mul(rate, big.NewRat(2*int64(p.Unit()), 1)),
	}
}

func init() {
	subjects = append(subjects,
		packedAllSubject("all-packed64-window-4-per-1s-then-bucket-3-per-1s-burst-5", 3, time.Second, 5, 4, time.Second, true),
		packedAllSubject("all-packed64-bucket-1000-per-1s-burst-50-then-window-60-per-50ms", 1000, time.Second, 50, 60, 50*time.Millisecond, false),
	)
}
