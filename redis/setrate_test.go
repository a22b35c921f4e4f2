package redis

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cellrate/cellrate/adaptive"
	"github.com/cellrate/cellrate/limit"
)

// TestWindowSetRateMatchesStep changes a window limiter's limit between
// decisions (SetRate and SetRateAt, up and down) on a real server and
// requires every decision to be package window's Step under the limit in
// force, on the state carried from the last one; then checks the stated
// bound on every interval of the run: at most L*(ceil(T/W)+1), L the
// largest limit in force from one window before the interval to its end.
func TestWindowSetRateMatchesStep(t *testing.T) {
	_, c := server(t)
	const W = int64(time.Second)
	l, err := NewWindow(c, "sr:", 10, time.Second, WithGrace(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(11, 12))
	var admitted []decision
	var s goWindowState
	lim := int64(10)
	now := time.Now().UnixNano()
	count := 600
	if testing.Short() {
		count = 250
	}
	for i := range count {
		switch rng.IntN(10) {
		case 0:
			lim = 1 + rng.Int64N(40)
			if err := l.SetRate(lim*3, 3*time.Second); err != nil {
				t.Fatal(err)
			}
		case 1:
			lim = 1 + rng.Int64N(40)
			if err := l.SetRateAt(0, float64(lim)+0.5); err != nil {
				t.Fatal(err)
			}
		}
		now += rng.Int64N(W / 8)
		n := 1 + rng.Int64N(3)
		ref, _ := newGoWindow(lim, time.Second)
		next, want, werr := stepGoWindow(ref, s, now, n)
		got, gerr := l.allowNAt(bg, "k", now, n)
		if got != want || gerr != werr {
			t.Fatalf("decision %d under limit %d: now %d n %d state %+v: %+v %v, window.Step %+v %v",
				i, lim, now, n, s, got, gerr, want, werr)
		}
		s = next
		if got.OK {
			admitted = append(admitted, decision{now, n, lim})
		}
	}
	checkWindowBound(t, admitted, W)
}

type decision struct{ at, n, lim int64 }

func checkWindowBound(t *testing.T, admitted []decision, W int64) {
	t.Helper()
	for i, a := range admitted {
		var sum, L int64
		for _, b := range admitted {
			if b.at >= a.at-W && b.at < a.at {
				L = max(L, b.lim)
			}
		}
		for _, b := range admitted[i:] {
			T := b.at - a.at
			sum += b.n
			L = max(L, b.lim)
			if bound := L * ((T+W-1)/W + 1); sum > bound {
				t.Fatalf("%d admitted in [%d, %d] (T %d): bound %d", sum, a.at, b.at, T, bound)
			}
		}
	}
}

// TestSetRateErrors: the parameters SetRate refuses, a GCRA's ErrFixedRate
// and a zero Limiter's ErrZeroValue, each leaving the limit as it was.
func TestSetRateErrors(t *testing.T) {
	_, c := server(t)
	w, _ := NewWindow(c, "se:", 7, 2*time.Second)
	var pe *limit.ParamError
	for _, tc := range []struct {
		events int64
		per    time.Duration
	}{{0, time.Second}, {1, 0}, {1, 3 * time.Second}, {1 << 32, 2 * time.Second}, {1 << 62, 1}} {
		if err := w.SetRate(tc.events, tc.per); !errors.As(err, &pe) {
			t.Errorf("SetRate(%d, %v) = %v, want a ParamError", tc.events, tc.per, err)
		}
	}
	for _, r := range []float64{0.4, -1, 1 << 32, 0.0 / zero} {
		if err := w.SetRateAt(0, r); !errors.As(err, &pe) {
			t.Errorf("SetRateAt(%v) = %v, want a ParamError", r, err)
		}
	}
	if _, err := w.AllowN(bg, "k", 8); err != limit.ErrCostExceedsBurst {
		t.Fatalf("8 of a limit of 7 after refused changes: %v", err)
	}
	if err := w.SetRate(4, time.Second); err != nil {
		t.Fatal(err)
	}
	if r, err := w.AllowN(bg, "k", 8); err != nil || !r.OK || r.Remaining != 0 {
		t.Fatalf("8 of a limit of 8: %+v %v", r, err)
	}
	g, _ := NewGCRA(c, "sg:", 8, time.Second, 3)
	for _, tc := range []struct {
		events int64
		per    time.Duration
	}{{0, time.Second}, {1, 0}, {2, 1}, {1, 1 << 62}, {3, 1<<49 + 1}} {
		if err := g.SetRate(tc.events, tc.per); !errors.As(err, &pe) {
			t.Errorf("GCRA SetRate(%d, %v) = %v, want a ParamError", tc.events, tc.per, err)
		}
	}
	for _, r := range []float64{0, -1, 1e-12, 1 << 63, 0.0 / zero} {
		if err := g.SetRateAt(0, r); !errors.As(err, &pe) {
			t.Errorf("GCRA SetRateAt(%v) = %v, want a ParamError", r, err)
		}
	}
	// Still 8/s, burst 3: the fourth at one instant waits 1/8 s.
	now := time.Now().UnixNano()
	for i := range 4 {
		r, err := g.allowNAt(bg, "k", now, 1)
		if err != nil || r.OK != (i < 3) || (i == 3 && r.RetryAfter != time.Second/8) {
			t.Fatalf("decision %d after refused changes: %+v %v", i, r, err)
		}
	}
	var z Limiter
	var nl *Limiter
	if err := z.SetRateAt(0, 1); err != errZeroValue {
		t.Errorf("zero Limiter: %v", err)
	}
	if err := nl.SetRate(1, time.Second); err != errZeroValue {
		t.Errorf("nil Limiter: %v", err)
	}
}

var zero float64

// TestAIMDDrivesWindow: an adaptive.AIMD drives a window limiter through
// SetRateAt; after failures its rate, and the limit the server enforces,
// are lower.
func TestAIMDDrivesWindow(t *testing.T) {
	_, c := server(t)
	w, _ := NewWindow(c, "aw:", 100, time.Second)
	a, err := adaptive.NewAIMD(w, 100, 5, 200, 10, 0.5, adaptive.WithInterval(time.Millisecond), adaptive.WithMinSamples(1))
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		a.Record(false)
		time.Sleep(2 * time.Millisecond)
	}
	if a.Rate() >= 100 {
		t.Fatalf("rate after failures: %v", a.Rate())
	}
	want := int64(a.Rate())
	n := int64(0)
	for {
		r, err := w.Allow(bg, "k")
		if err != nil {
			t.Fatal(err)
		}
		if !r {
			break
		}
		n++
	}
	if n != want {
		t.Fatalf("admitted %d in a row, the AIMD's limit is %d", n, want)
	}
}

// TestAIMDDrivesGCRA: an adaptive.AIMD drives a GCRA limiter through
// SetRateAt; after failures its rate is lower, and the server enforces it:
// an idle key admits its burst at once, then one event per new interval.
func TestAIMDDrivesGCRA(t *testing.T) {
	_, c := server(t)
	g, _ := NewGCRA(c, "ag:", 100, time.Second, 5)
	a, err := adaptive.NewAIMD(g, 100, 5, 200, 10, 0.5, adaptive.WithInterval(time.Millisecond), adaptive.WithMinSamples(1))
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		a.Record(false)
		time.Sleep(2 * time.Millisecond)
	}
	rate := a.Rate()
	if rate >= 100 || rate < 5 {
		t.Fatalf("rate after failures: %v", rate)
	}
	now := time.Now().UnixNano()
	for i := range 6 {
		r, err := g.allowNAt(bg, "k", now, 1)
		if err != nil || r.OK != (i < 5) {
			t.Fatalf("decision %d: %+v %v", i, r, err)
		}
		if i == 5 {
			// The wait for one event at the AIMD's rate (within the ns the
			// fraction and the rounding up take).
			want := time.Duration(float64(time.Second) / rate)
			if d := r.RetryAfter - want; d < -2 || d > 2 {
				t.Fatalf("the sixth waits %v, one event at %v/s is %v", r.RetryAfter, rate, want)
			}
		}
	}
}
