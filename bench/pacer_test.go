package bench

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"go.uber.org/ratelimit"

	"github.com/cellrate/cellrate/pacer"
)

// BenchmarkPacer times one Take that never sleeps: both pacers at 1e9 per
// second without slack, which calls never outrun. take reads each pacer's
// own clock; take-injected passes a time that moves 100 ns per call (uber
// through its Clock option), the cost of taking a slot alone.
func BenchmarkPacer(b *testing.B) {
	ctx := context.Background()
	for _, g := range goroutines() {
		b.Run(fmt.Sprintf("take-injected/uber-ratelimit/g=%d", g), func(b *testing.B) {
			c := new(injected)
			l := ratelimit.New(1e9, ratelimit.WithoutSlack, ratelimit.WithClock(c))
			run(b, g, func(t *int64) bool { *t += step; c.now.Store(*t); l.Take(); return true })
		})
		b.Run(fmt.Sprintf("take-injected/cellrate-pacer/g=%d", g), func(b *testing.B) {
			p, err := pacer.New(1e9, time.Second)
			if err != nil {
				b.Fatal(err)
			}
			run(b, g, func(t *int64) bool { *t += step; return p.ReserveAt(*t).OK })
		})
	}
	for _, g := range goroutines() {
		b.Run(fmt.Sprintf("take/uber-ratelimit/g=%d", g), func(b *testing.B) {
			l := ratelimit.New(1e9, ratelimit.WithoutSlack)
			run(b, g, func(*int64) bool { l.Take(); return true })
		})
		b.Run(fmt.Sprintf("take/cellrate-pacer/g=%d", g), func(b *testing.B) {
			p, err := pacer.New(1e9, time.Second)
			if err != nil {
				b.Fatal(err)
			}
			run(b, g, func(*int64) bool { return p.Wait(ctx) == nil })
		})
	}
}

// Spacing is how far the slots of n takes by one caller stray from the
// ideal schedule first + k*period/events, in ns.
type Spacing struct {
	MeanAbs, MaxAbs float64 // |slot_k - ideal_k|
	Last            float64 // slot_n-1 - ideal_n-1: the drift at the end
}

func spacing(slots []int64, events int64, period time.Duration) Spacing {
	var s Spacing
	for k, t := range slots {
		ideal := float64(slots[0]) + float64(k)*float64(period)/float64(events)
		d := float64(t) - ideal
		s.MeanAbs += math.Abs(d) / float64(len(slots))
		s.MaxAbs = max(s.MaxAbs, math.Abs(d))
		s.Last = d
	}
	return s
}

// scheduleUber returns the times uber's Take returns on an injected clock
// that its Sleep advances (no wake-up delay): its schedule alone.
func scheduleUber(events int64, period time.Duration, n int) []int64 {
	c := new(injected)
	c.now.Store(int64(time.Hour))
	l := ratelimit.New(int(events), ratelimit.Per(period), ratelimit.WithoutSlack, ratelimit.WithClock(c))
	out := make([]int64, n)
	for i := range out {
		out[i] = l.Take().Sub(epoch).Nanoseconds()
	}
	return out
}

// schedulePacer returns the slots cellrate's pacer gives one caller whose
// clock reads each slot as it is given.
func schedulePacer(events int64, period time.Duration, n int) []int64 {
	p, err := pacer.New(events, period)
	if err != nil {
		panic(err)
	}
	now := int64(time.Hour)
	out := make([]int64, n)
	for i := range out {
		now += int64(p.ReserveAt(now).Wait)
		out[i] = now
	}
	return out
}

// TestPacerScheduleError compares the two schedules with no sleeping at
// all: the rates whose interval is not a whole number of ns (uber divides
// it down to one) and a high rate.
func TestPacerScheduleError(t *testing.T) {
	for _, c := range []struct {
		events int64
		period time.Duration
		n      int
	}{
		{3, time.Second, 3001},
		{7, time.Millisecond, 7001},
		{3e8, time.Second, 30001},
	} {
		u := spacing(scheduleUber(c.events, c.period, c.n), c.events, c.period)
		o := spacing(schedulePacer(c.events, c.period, c.n), c.events, c.period)
		t.Logf("%d per %v, %d takes: drift at the end uber %+.0f ns, cellrate %+.0f ns; max |error| uber %.0f ns, cellrate %.0f ns",
			c.events, c.period, c.n, u.Last, o.Last, u.MaxAbs, o.MaxAbs)
		if o.MaxAbs > 3 {
			t.Errorf("cellrate's pacer strays %v ns from the schedule", o.MaxAbs)
		}
	}
}

// TestPacerSlackAfterPause is go.uber.org/ratelimit's issue #119: 1 per
// second with a slack of 1, a pause of 2 s after the first take, then more
// takes; it counts the takes that come less than the interval after the
// one before, on an injected clock.
func TestPacerSlackAfterPause(t *testing.T) {
	c := new(injected)
	c.now.Store(int64(time.Hour))
	u := ratelimit.New(1, ratelimit.WithSlack(1), ratelimit.WithClock(c))
	p, _ := pacer.New(1, time.Second, pacer.WithSlack(1))
	early := func(take func() int64) int {
		n, last := 0, int64(0)
		for i := range 25 {
			if i == 1 {
				c.now.Add(int64(2 * time.Second))
			}
			at := take()
			if i > 0 && at-last < int64(time.Second) {
				n++
			}
			last = at
		}
		return n
	}
	eu := early(func() int64 { return u.Take().Sub(epoch).Nanoseconds() })
	c.now.Store(int64(time.Hour))
	ep := early(func() int64 {
		now := c.now.Load()
		w := int64(p.ReserveAt(now).Wait)
		c.now.Add(w)
		return now + w
	})
	t.Logf("takes sooner than the interval after a 2 s pause with slack 1: uber %d of 24, cellrate %d of 24", eu, ep)
	if ep != 1 {
		t.Errorf("cellrate's pacer let %d takes come early, want the slack's 1", ep)
	}
}
