package packed64core

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cellrate/cellrate/internal/bound"
	"github.com/cellrate/cellrate/internal/limittest"
	"github.com/cellrate/cellrate/internal/race"
	"github.com/cellrate/cellrate/internal/slide"
	"github.com/cellrate/cellrate/limit"
)

func TestWindowParamsValidate(t *testing.T) {
	for _, c := range []struct {
		limit    int64
		win      time.Duration
		param    string
		value    any
		min, max any
	}{
		{0, time.Second, "limit", int64(0), int64(1), int64(MaxWindowLimit)},
		{MaxWindowLimit + 1, time.Second, "limit", int64(MaxWindowLimit + 1), int64(1), int64(MaxWindowLimit)},
		{1, 0, "window", time.Duration(0), time.Duration(1), MaxWindow},
		{1, MaxWindow + 1, "window", MaxWindow + 1, time.Duration(1), MaxWindow},
	} {
		_, err := NewWindowParams(c.limit, c.win)
		var pe *limit.ParamError
		if !errors.As(err, &pe) || pe.Pkg != "packed64" || pe.Param != c.param || pe.Value != c.value || pe.Min != c.min || pe.Max != c.max {
			t.Errorf("NewWindowParams(%d, %v) error %#v, want %s %v in [%v, %v]", c.limit, c.win, pe, c.param, c.value, c.min, c.max)
		}
		if _, err2 := NewWindow(c.limit, c.win); err2 == nil || err2.Error() != err.Error() {
			t.Errorf("NewWindow: error %v, NewWindowParams %v", err2, err)
		}
	}
	var pe *limit.ParamError
	if _, err := NewWindow(1, time.Second, WithClock(nil)); !errors.As(err, &pe) || pe.Param != "clock" {
		t.Errorf("WithClock(nil): error %v", err)
	}
	for _, w := range []time.Duration{1, 4095, 4096, 8191, 8192, 8193, time.Microsecond, time.Second, 1<<40 + 1, MaxWindow} {
		p, err := NewWindowParams(MaxWindowLimit, w)
		if err != nil {
			t.Fatal(err)
		}
		if p.Window() < w || float64(p.Window()-w) > float64(w)/4096 || p.r.W > 1<<windowUnitBits {
			t.Errorf("window %v: rounded to %v, %d units of %v", w, p.Window(), p.r.W, p.Unit())
		}
		if p.Wrap() != math.MaxInt64 && int64(p.Wrap()) < 1<<15*int64(p.Window()) {
			t.Errorf("window %v wraps after %v", w, p.Wrap())
		}
	}
}

func FuzzWindowPack(f *testing.F) {
	f.Add(uint64(0))
	f.Add(uint64(math.MaxUint64))
	f.Add(uint64(1)<<36 | 1<<18 | 1)
	f.Fuzz(func(t *testing.T, w uint64) {
		s := unpackWindow(WindowWord(w))
		if s.Start >= 1<<windowStartBits || s.Prev > MaxWindowLimit || s.Cur > MaxWindowLimit {
			t.Fatalf("fields out of range: %+v", s)
		}
		if packWindow(s) != WindowWord(w) || unpackWindow(packWindow(s)) != s {
			t.Fatalf("round trip of %#x: %+v", w, s)
		}
	})
}

func TestWindowStepMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	runs := 400
	switch {
	case race.Enabled: // pure: see package race
		runs = 12
	case testing.Short():
		runs = 80
	}
	limits := []int64{1, 2, 3, 10, 1000, MaxWindowLimit}
	wins := []time.Duration{1, 7, 4096, 8193, time.Microsecond * 3, time.Millisecond, time.Second, 24 * time.Hour}
	for run := range runs {
		l := limits[rng.IntN(len(limits))]
		win := wins[rng.IntN(len(wins))]
		if rng.IntN(3) == 0 {
			l, win = 1+rng.Int64N(MaxWindowLimit), time.Duration(1+rng.Int64N(1<<40))
		}
		base := rng.Int64N(1<<50) - 1<<49 // times on both sides of 0
		p, err := NewWindowParams(l, win)
		if err != nil {
			t.Fatal(err)
		}
		ref := newWindowRef(&p)
		span := int64(p.Window())
		var w WindowWord
		now := base + rng.Int64N(1<<40)
		high := now
		for i := range 300 {
			now += gap(rng, span, run%2 == 1)
			high = max(high, now)
			n := int64(1)
			switch rng.IntN(6) {
			case 0:
				n = 1 + rng.Int64N(l)
			case 1:
				n = l + 1 - rng.Int64N(3)
			}
			s := WindowState{w, high + rng.Int64N(p.Slack()+1)}
			ns, got, err := p.Step(s, now, n)
			next := ns.Word
			if err != limittest.WantErr(n, l) {
				t.Fatalf("n %d: error %v", n, err)
			}
			if ns != s && (ns.Ref < now || ns.Ref < s.Ref && unpackWindow(s.Word).Prev|unpackWindow(s.Word).Cur != 0) {
				t.Fatalf("run %d step %d: state %+v after %+v at %d: the new Ref is before the write", run, i, ns, s, now)
			}
			want := ref.step(now, n)
			if got != want {
				t.Fatalf("run %d step %d (limit %d window %v as %d units of %v, word %+v, now %d, n %d): got %+v, want %+v",
					run, i, l, win, p.r.W, p.Unit(), unpackWindow(w), now, n, got, want)
			}
			w = next
			if s := unpackWindow(w); got.OK && n > 0 &&
				(s.Start != uint64(ref.start)&p.clk.mask || s.Prev != uint64(ref.prev) || s.Cur != uint64(ref.cur)) {
				t.Fatalf("run %d step %d: word %+v, reference %+v", run, i, s, ref)
			}
		}
	}
}

// TestWindowBoundStaleTimes checks the window's bound over the times
// callers pass, stale, repeated and out of order (in units): at most
// 2*limit + limit*T/W in any interval T, since every fixed window counts
// only units at caller times inside it, at most limit of them, and the
// windows never overlap. Half the runs go through Step, half through a
// Window cell (AllowAt and AllowNAt); each decision is also checked against
// the reference.
func TestWindowBoundStaleTimes(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	runs := 200
	switch {
	case race.Enabled: // one goroutine: see package race
		runs = 4
	case testing.Short():
		runs = 40
	}
	for run := range runs {
		l := 2 + rng.Int64N(30)
		cell := run%2 == 1
		base := rng.Int64N(1<<50) - 1<<49 // a HighWater's zero value suits any clock
		p, err := NewWindowParams(l, time.Duration(1+rng.Int64N(1<<40)))
		if err != nil {
			t.Fatal(err)
		}
		c := &Window{c: windowCell{p: p}}
		ref := newWindowRef(&p)
		span := int64(p.Window())
		var (
			w    WindowWord
			adm  []admission
			uses []bound.Use
		)
		clock := base + span + rng.Int64N(1<<40)
		high := clock
		for range 400 {
			clock += gap(rng, span, false)
			now := staleTime(rng, clock, span, adm)
			high = max(high, now)
			n := 1 + rng.Int64N(min(l, 4))
			var r limit.Result
			switch {
			case !cell:
				var next WindowState
				next, r, _ = p.Step(WindowState{w, high + rng.Int64N(p.Slack()+1)}, now, n)
				if r.OK {
					w = next.Word
				}
			case n == 1:
				r.OK = c.AllowAt(now)
			default:
				r, _ = c.AllowNAt(now, n)
			}
			want := ref.step(now, n)
			if cell && n == 1 {
				want = limit.Result{OK: want.OK}
			}
			if r != want {
				t.Fatalf("limit %d window %v, cell %v, now %d n %d: got %+v, reference %+v", l, p.Window(), cell, now, n, r, want)
			}
			if r.OK {
				adm = append(adm, admission{now, n})
				uses = append(uses, bound.Use{At: ref.units(now), Cost: n})
			}
		}
		if err := bound.Check(uses, 2*uint64(l), uint64(l), p.r.W); err != nil {
			t.Fatalf("limit %d, window %d units of %v: %v", l, p.r.W, p.Unit(), err)
		}
	}
}

// TestWindowLogBound checks package window's bound in real time, with the
// rounded window and one unit of slack: in any interval (t-W-u, t] at most
// 2*limit-1 units, over schedules that idle for whole wraps too.
func TestWindowLogBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	for range 40 {
		l := 1 + rng.Int64N(50)
		p, _ := NewWindowParams(l, time.Duration(1+rng.Int64N(1<<36)))
		win, unit := int64(p.Window()), int64(p.Unit())
		var (
			w     WindowWord
			times []int64
		)
		now := int64(1 << 40)
		for range 3000 {
			if rng.IntN(200) == 0 {
				now += int64(p.Wrap())*(1+rng.Int64N(2)) + rng.Int64N(4*win) - 2*win
			} else {
				now += rng.Int64N(win/l + 1)
			}
			n := 1 + rng.Int64N(min(l, 3))
			next, r, _ := p.Step(WindowState{w, now}, now, n)
			if !r.OK {
				continue
			}
			w = next.Word
			for range n {
				times = append(times, now)
			}
			in := int64(0)
			for i := len(times) - 1; i >= 0 && times[i] > now-win-unit; i-- {
				in++
			}
			if in > 2*l-1 {
				t.Fatalf("limit %d window %v: %d units in the window ending at %d", l, p.Window(), in, now)
			}
		}
	}
}

// FuzzWindowWrap checks the package doc's claim for the window: with ref
// at or after the write, a wrapped word never admits more than the
// unwrapped counter.
func FuzzWindowWrap(f *testing.F) {
	f.Add(int64(10), int64(1e9), uint64(1<<30+5), uint32(3), uint32(4), int64(1<<41), int64(1), uint64(7))
	f.Add(int64(10), int64(1e6), uint64(3), uint32(3), uint32(4), int64(1<<36), int64(1), uint64(1<<28+1))
	f.Add(int64(50), int64(1e9), uint64(math.MaxInt64-5), uint32(20), uint32(30), int64(math.MaxInt64), int64(1), uint64(math.MaxUint64))
	f.Add(int64(1), int64(1), uint64(1)<<63, uint32(0), uint32(1), int64(math.MinInt64), int64(1), uint64(5))
	f.Fuzz(func(t *testing.T, l, win int64, start uint64, prev, cur uint32, now, n int64, refAhead uint64) {
		p, err := NewWindowParams(l, time.Duration(win))
		if err != nil {
			return
		}
		// Started at any unit of int64 time; ref anywhere from the write to
		// the end of time, many wraps on; now anywhere.
		su := int64(start) >> p.clk.shift
		s := windowFields{Start: uint64(su) & p.clk.mask, Prev: uint64(prev) % (p.r.L + 1), Cur: uint64(cur) % (p.r.L + 1)}
		ref := aheadOf(su, refAhead, p.clk.shift)
		_, got, err := p.Step(WindowState{packWindow(s), ref}, now, n)
		if err != nil {
			return
		}
		_, gotLeft, _ := p.Step(WindowState{packWindow(s), ref}, now, 0)
		model := newWindowRef(&p)
		model.start, model.prev, model.cur = su, int64(s.Prev), int64(s.Cur)
		wantLeft := model.step(now, 0)
		if want := model.step(now, n); got.OK && !want.OK || gotLeft.Remaining > wantLeft.Remaining ||
			!got.OK && !want.OK && got.RetryAfter < want.RetryAfter {
			t.Fatalf("word %+v (start %d), now %d, ref %d: wrapped %+v (%d left), unwrapped %+v (%d left)",
				s, su, now, ref, got, gotLeft.Remaining, want, wantLeft.Remaining)
		}
	})
}

func TestWindowConcurrentConservation(t *testing.T) {
	c, _ := NewWindow(1000, time.Millisecond)
	p := c.Params()
	checkConservation(t, c, &c.c.word, int64(time.Millisecond/2), func(w uint64, now int64) (uint64, bool) {
		next, r, _ := p.Step(WindowState{WindowWord(w), now}, now, 1)
		return uint64(next.Word), r.OK
	})
}

func TestWindowZero(t *testing.T) {
	var c Window
	if c.AllowAt(1) || c.EstimateAt(1) != 0 {
		t.Fatal("zero Window admitted")
	}
	if r, err := c.AllowNAt(1, 1); r.OK || !errors.Is(err, limit.ErrCostExceedsBurst) {
		t.Fatalf("AllowNAt(1, 1) = %+v, %v", r, err)
	}
}

// FuzzWindowStep feeds Step any word, time and cost: it must not panic,
// must leave the word alone when it denies, must not point a wait past the
// end of int64 time, and must never store a count above the limit.
func FuzzWindowStep(f *testing.F) {
	f.Add(int64(10), int64(1e9), uint64(math.MaxUint64), int64(5), int64(7), int64(1))
	f.Add(int64(MaxWindowLimit), int64(MaxWindow), uint64(1)<<36|1, int64(-1), int64(0), int64(2))
	end, _ := NewWindowParams(50, time.Second) // filled at the last unit of time
	f.Add(int64(50), int64(time.Second), uint64(end.word(slide.State{Start: end.clk.units(math.MaxInt64), Cur: 50})), int64(math.MaxInt64-5), int64(math.MaxInt64), int64(1))
	f.Fuzz(func(t *testing.T, l, win int64, w uint64, now, ref, n int64) {
		p, err := NewWindowParams(l, time.Duration(win))
		if err != nil {
			return
		}
		st := WindowState{WindowWord(w), ref}
		ns, r, err := p.Step(st, now, n)
		next := ns.Word
		if err != limittest.WantErr(n, l) {
			t.Fatalf("n %d: error %v", n, err)
		}
		switch s := unpackWindow(next); {
		case err != nil:
			if next != WindowWord(w) || r.OK || r.RetryAfter != limit.Never {
				t.Fatalf("error %v with %+v", err, r)
			}
		case !r.OK:
			if next != WindowWord(w) || r.RetryAfter <= 0 || r.Remaining < 0 || r.Remaining >= n ||
				r.RetryAfter != limit.Never && now > math.MaxInt64-int64(r.RetryAfter) {
				t.Fatalf("denial %+v changed the word or has no wait, or a wait past the end of time", r)
			}
		case n > 0 && (s.Cur > uint64(l) || s.Prev > max(uint64(l), unpackWindow(WindowWord(w)).Prev, unpackWindow(WindowWord(w)).Cur)):
			t.Fatalf("stored %+v above limit %d", s, l)
		case r.Remaining < 0 || r.Remaining > l-n || r.RetryAfter != 0:
			t.Fatalf("admission %+v", r)
		}
		if est := p.EstimateAt(st, now); est < 0 || math.IsNaN(est) {
			t.Fatalf("EstimateAt %v", est)
		}
		if _, r0, _ := p.Step(st, now, 0); p.RemainingAt(st, now) != r0.Remaining {
			t.Fatalf("RemainingAt %d, Step(n = 0) %+v", p.RemainingAt(st, now), r0)
		}
	})
}
