package concurrency

import (
	"math"
	"testing"
	"time"
)

// simulate drives l with a saturating load against a service of workers
// that each take service per request: every round admits all the limit
// allows at now and releases them together, each after
// service × max(1, inFlight/workers). It returns the limits after each
// round.
func simulate(t *testing.T, l *Limiter, workers int, service time.Duration, rounds int) []float64 {
	t.Helper()
	now := int64(time.Hour)
	var out []float64
	for range rounds {
		var toks []Token
		for {
			tok, ok := l.TryAcquireAt(now)
			if !ok {
				break
			}
			toks = append(toks, tok)
		}
		rtt := int64(service) * int64(max(workers, len(toks))) / int64(workers)
		now += rtt
		for _, tok := range toks {
			if !tok.ReleaseAt(now, Success) {
				t.Fatal("release refused")
			}
		}
		out = append(out, l.limitFloat())
	}
	return out
}

func newAdaptive(t *testing.T, alg algorithm, initial int) *Limiter {
	t.Helper()
	l, err := newWith(alg, WithLimits(initial, 1, 1000), WithWindow(time.Millisecond, time.Second, 10), WithClock(zeroClock))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestConverges: each adaptive algorithm, from below and from far above
// the service's concurrency, settles within 15% above it and stays there
// (aimd, whose threshold is 10% above the no-load latency, within -15% and
// +20%), over more windows than a probe's period.
func TestConverges(t *testing.T) {
	const workers = 20
	cases := []struct {
		name   string
		mk     func() algorithm
		lo, hi float64
	}{
		{"vegas", func() algorithm { return &vegas{} }, workers, 1.15 * workers},
		{"gradient", func() algorithm { return &gradient{} }, workers, 1.15 * workers},
		{"aimd", func() algorithm { return &aimd{Threshold: 44 * time.Millisecond} }, 0.85 * workers, 1.2 * workers},
	}
	for _, c := range cases {
		for _, initial := range []int{5, 200} {
			l := newAdaptive(t, c.mk(), initial)
			if initial > workers {
				// The no-load latency must be seen once: start light.
				l.limit.Store(f64(5))
			}
			lims := simulate(t, l, workers, 40*time.Millisecond, 300)
			if initial > workers {
				l.limit.Store(f64(float64(initial)))
				lims = simulate(t, l, workers, 40*time.Millisecond, 300)
			}
			// Probes of the no-load latency dip below for a round or two.
			out := 0
			for i, v := range lims[200:] {
				if v > c.hi {
					t.Errorf("%s from %d: limit %.2f at round %d, above %.1f", c.name, initial, v, 200+i, c.hi)
					break
				}
				if v < c.lo {
					out++
				}
			}
			if out > 10 {
				t.Errorf("%s from %d: %d of 100 rounds below %.1f", c.name, initial, out, c.lo)
			}
		}
	}
}

func TestDropsBackOff(t *testing.T) {
	for _, alg := range []algorithm{&vegas{}, &gradient{}, &aimd{}} {
		w := window{Samples: 10, Drops: 1, MinRTT: time.Millisecond, AvgRTT: time.Millisecond, MaxInFlight: 100}
		if got := alg.update(100, w); got != 90 {
			t.Errorf("%T: a window with drops moved 100 to %v, want 90", alg, got)
		}
	}
}

func TestAppLimitedHolds(t *testing.T) {
	for _, alg := range []algorithm{&vegas{}, &gradient{}, &aimd{}} {
		w := window{Samples: 10, MinRTT: time.Millisecond, AvgRTT: time.Millisecond, MaxInFlight: 49}
		alg.update(100, w) // first window sets the no-load latency
		if got := alg.update(100, w); got != 100 {
			t.Errorf("%T: a window at 49 in flight moved limit 100 to %v", alg, got)
		}
		w.MaxInFlight = 50
		if got := alg.update(100, w); got <= 100 {
			t.Errorf("%T: a window at 50 in flight with no queue kept limit 100 at %v", alg, got)
		}
	}
}

func TestEmptyWindowHolds(t *testing.T) {
	for _, alg := range []algorithm{&vegas{}, &gradient{}, &aimd{}} {
		if got := alg.update(7, window{}); got != 7 {
			t.Errorf("%T: an empty window moved 7 to %v", alg, got)
		}
	}
}

// TestQueueLowers: a window whose mean latency is twice the no-load one
// at a full limit means half the limit is queue: each rule lowers it.
func TestQueueLowers(t *testing.T) {
	for _, alg := range []algorithm{&vegas{}, &gradient{}, &aimd{Threshold: 15 * time.Millisecond}} {
		alg.update(40, window{Samples: 10, MinRTT: 10 * time.Millisecond, AvgRTT: 10 * time.Millisecond, MaxInFlight: 40})
		got := alg.update(40, window{Samples: 10, MinRTT: 20 * time.Millisecond, AvgRTT: 20 * time.Millisecond, MaxInFlight: 40})
		if got >= 40 || got < 20 {
			t.Errorf("%T: limit 40 at twice the no-load latency went to %v, want in [20, 40)", alg, got)
		}
	}
}

// TestLimiterClampsAndIgnoresNaN: the Limiter keeps an algorithm's output
// within [min, max] and ignores NaN.
func TestLimiterClampsAndIgnoresNaN(t *testing.T) {
	for _, c := range []struct{ out, want float64 }{{1e9, 50}, {-5, 2}, {nan(), 10}} {
		l, err := newWith(constAlg(c.out), WithLimits(10, 2, 50), WithWindow(1, 1, 1), WithClock(zeroClock))
		if err != nil {
			t.Fatal(err)
		}
		tok, _ := l.TryAcquireAt(100)
		tok.ReleaseAt(200, Success)
		if got := l.limitFloat(); got != c.want {
			t.Errorf("algorithm output %v: limit %v, want %v", c.out, got, c.want)
		}
	}
}

type constAlg float64

func (c constAlg) update(float64, window) float64 { return float64(c) }

func nan() float64 { var z float64; return z / z }

func zeroClock() int64 { return 0 }

// TestSlowerServiceReprobed: when the service becomes twice as slow, the
// old no-load latency would hold the limit near half the service's
// concurrency; the probe finds the new one and the limit returns to it.
func TestSlowerServiceReprobed(t *testing.T) {
	const workers = 20
	for _, alg := range []algorithm{&vegas{}, &gradient{}} {
		l := newAdaptive(t, alg, 5)
		simulate(t, l, workers, 40*time.Millisecond, 300)
		lims := simulate(t, l, workers, 80*time.Millisecond, 600)
		low := 0
		for _, v := range lims[500:] {
			if v < workers {
				low++
			}
		}
		if low > 10 {
			t.Errorf("%T: %d of the last 100 rounds below %d after the service slowed", alg, low, workers)
		}
	}
}

// TestRecoveryAfterDrops: after back-offs on drops, windows without queue
// take the limit half the way back to where they began at each window;
// a window with a queue forgets that level.
func TestRecoveryAfterDrops(t *testing.T) {
	clean := window{Samples: 10, MinRTT: 10 * time.Millisecond, AvgRTT: 10 * time.Millisecond, MaxInFlight: 100}
	dropped := clean
	dropped.Drops = 1
	queued := clean
	queued.AvgRTT = 20 * time.Millisecond
	for _, mk := range []func() algorithm{func() algorithm { return &vegas{} }, func() algorithm { return &gradient{} }} {
		alg := mk()
		alg.update(100, clean)
		l := alg.update(alg.update(100, dropped), dropped) // 100 -> 90 -> 81
		if l != 81 {
			t.Fatalf("%T: two back-offs from 100 gave %v", alg, l)
		}
		if got := alg.update(l, clean); got != 90.5 {
			t.Errorf("%T: first clean window after back-offs: %v, want 90.5 (half way back to 100)", alg, got)
		}
		alg = mk()
		alg.update(100, clean)
		l = alg.update(alg.update(100, dropped), dropped)
		l = alg.update(l, queued) // the old level was too much: forget it
		if got := alg.update(l, clean); got >= l+(100-l)/2 {
			t.Errorf("%T: after a queued window the limit still climbs back: %v from %v", alg, got, l)
		}
	}
}

// TestAIMDHoldsAfterBackoff: over a run of slow windows, aimd backs off
// on every other one (the window after a back-off holds); drops back off
// on every window.
func TestAIMDHoldsAfterBackoff(t *testing.T) {
	a := &aimd{Threshold: 10 * time.Millisecond}
	slow := window{Samples: 10, AvgRTT: 20 * time.Millisecond, MaxInFlight: 100}
	want := []float64{90, 90, 81, 81}
	lim := 100.0
	for i, w := range want {
		if lim = a.update(lim, slow); lim != w {
			t.Fatalf("slow window %d: limit %v, want %v", i, lim, w)
		}
	}
	drop := slow
	drop.Drops = 1
	if lim = a.update(lim, drop); lim != 72.9 {
		t.Fatalf("a drop after a back-off: %v, want 72.9", lim)
	}
	if lim = a.update(lim, slow); lim != 72.9 {
		t.Fatalf("a slow window after a back-off on drops: %v, want it held", lim)
	}
}

// TestProbeSchedule: the no-load probe starts on the History-th window at
// half the limit, holds half while a window saw more than half in flight,
// gives up after maxProbe windows keeping the old no-load latency, and
// ends at once on a window that saw at most half, whose mean latency
// becomes the no-load one.
func TestProbeSchedule(t *testing.T) {
	const hist = 3
	var m noLoad
	idle := window{Samples: 10, AvgRTT: 10 * time.Millisecond, MaxInFlight: 40}
	startProbe := func() {
		t.Helper()
		for i := 1; i < hist; i++ {
			if _, _, ok := m.step(40, idle, hist); ok {
				t.Fatalf("window %d of %d started a probe", i, hist)
			}
		}
		if _, next, ok := m.step(40, idle, hist); !ok || next != 20 {
			t.Fatalf("window %d: %v, %v; want a probe at 20", hist, next, ok)
		}
	}
	startProbe()
	busy := window{Samples: 10, AvgRTT: 30 * time.Millisecond, MaxInFlight: 21}
	for i := 2; i <= maxProbe; i++ {
		if _, next, ok := m.step(20, busy, hist); !ok || next != 20 {
			t.Fatalf("probe window %d above half in flight: %v, %v; want held at 20", i, next, ok)
		}
	}
	if base, next, ok := m.step(20, busy, hist); !ok || next != 40 || base != 10*time.Millisecond {
		t.Fatalf("probe past %d windows: base %v, limit %v, %v; want 10ms, 40 restored", maxProbe, base, next, ok)
	}
	startProbe()
	atHalf := window{Samples: 10, AvgRTT: 15 * time.Millisecond, MaxInFlight: 20}
	if base, next, ok := m.step(20, atHalf, hist); !ok || next != 40 || base != 15*time.Millisecond {
		t.Fatalf("probe window at half in flight: base %v, limit %v, %v; want 15ms, 40 restored", base, next, ok)
	}
}

// TestAIMDThresholdExclusive: a window whose mean latency equals the
// threshold is not a loss.
func TestAIMDThresholdExclusive(t *testing.T) {
	a := &aimd{Threshold: 10 * time.Millisecond}
	w := window{Samples: 10, AvgRTT: 10 * time.Millisecond, MaxInFlight: 100}
	if got := a.update(100, w); got != 101 {
		t.Fatalf("a window at the threshold moved 100 to %v, want 101", got)
	}
}

// TestRecoveryLevel: rises climb half the way back to the level the
// back-offs started from while they are more than one request below it,
// keep the level at exactly one below, and forget it once within one, so
// that a later back-off starts from the limit it backs off from.
func TestRecoveryLevel(t *testing.T) {
	var r recovery
	steps := []struct {
		limit, next, want float64
	}{{50, 51, 75}, {75, 76, 87.5}, {87.5, 99, 99}, {99, 99.2, 99.5}}
	if got := r.backoff(100, 0.5); got != 50 {
		t.Fatalf("backoff of 100 by 0.5: %v", got)
	}
	for _, s := range steps {
		if got := r.rise(s.limit, s.next); got != s.want {
			t.Fatalf("rise from %v with the rule at %v: %v, want %v", s.limit, s.next, got, s.want)
		}
	}
	if got := r.backoff(99.5, 0.5); got != 49.75 {
		t.Fatalf("backoff of 99.5 by 0.5: %v", got)
	}
	if got := r.rise(49.75, 50); got != 74.625 {
		t.Fatalf("rise after a back-off from 99.5: %v, want 74.625 (half way back to 99.5, not to 100)", got)
	}
}

// TestRuleSteps: one window of each latency rule at limit 100, from a
// no-load latency of 10 ms: no queue raises it by the rule's step, a queue
// of half the limit lowers it by Smoothing of the way to the rule's
// target, and Vegas holds a queue within its band.
func TestRuleSteps(t *testing.T) {
	at := func(avg time.Duration) window {
		return window{Samples: 10, MinRTT: avg, AvgRTT: avg, MaxInFlight: 100}
	}
	cases := []struct {
		alg  algorithm
		avg  time.Duration
		want float64
	}{
		{&gradient{}, 10 * time.Millisecond, 105},  // 100 + 5% headroom
		{&gradient{}, 20 * time.Millisecond, 77.5}, // half way to 100×0.5 + 5
		{&vegas{}, 10 * time.Millisecond, 106.5},   // 100 + the band's middle, (3 + 10)/2
		{&vegas{}, 20 * time.Millisecond, 78.25},   // half way from a queue of 50 to 6.5
		{&vegas{}, 10500 * time.Microsecond, 100},  // a queue of 4.8 is within [3, 10]
		{&vegas{Alpha: 0.1, Beta: 0.2}, 10 * time.Millisecond, 115},
		{&vegas{Alpha: 0.1, Beta: 0.2}, 10500 * time.Microsecond, 115 - 100.0/21}, // less a queue of 100/21
		{&vegas{Alpha: 0.25, Beta: 0.5}, 20 * time.Millisecond, 100},              // a queue of 50 at the band's top
		{&vegas{Alpha: 0.5, Beta: 0.6}, 20 * time.Millisecond, 100},               // and at its bottom
	}
	for _, c := range cases {
		c.alg.update(100, at(10*time.Millisecond))
		if got := c.alg.update(100, at(c.avg)); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%#v at a mean of %v: 100 moved to %v, want %v", c.alg, c.avg, got, c.want)
		}
	}
}

// TestZeroLatencyHolds: a window whose requests all took no time (a clock
// too coarse to see them) says nothing about a queue: the limit holds.
func TestZeroLatencyHolds(t *testing.T) {
	for _, alg := range []algorithm{&vegas{}, &gradient{}} {
		alg.update(100, window{Samples: 10, MinRTT: time.Millisecond, AvgRTT: time.Millisecond, MaxInFlight: 100})
		if got := alg.update(100, window{Samples: 10, MaxInFlight: 100}); got != 100 {
			t.Errorf("%T: a window of zero latency moved 100 to %v", alg, got)
		}
	}
}
