package bucketcore

import (
	"context"
	"errors"
	"math"
	"math/big"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/nanotime"
)

// parked returns a Limiter of ps whose SetParamsAt(now, to) stopped after
// retiring the generation and before carrying its state over (the other
// goroutine descheduled there), and one on which that SetParamsAt ran to
// the end. fill is taken from both first.
func parked(t *testing.T, ps, to Params, now, fill int64) (stopped, done *Limiter) {
	t.Helper()
	stopped, _ = NewFromParams(ps)
	done, _ = NewFromParams(ps)
	if fill > 0 {
		stopped.AllowNAt(now, fill)
		done.AllowNAt(now, fill)
	}
	if err := done.SetParamsAt(now, to); err != nil {
		t.Fatal(err)
	}
	g := stopped.cur.Load()
	nx := &gen{ps: to, since: now}
	nx.state.Store(0, pending)
	g.next.Store(nx)
	tt, d := g.state.Load()
	g.state.Store(tt, d|retiredBit)
	return stopped, done
}

// TestParkedSetParams: every method of a Limiter whose SetParams is parked
// between retiring the old generation and carrying its state over finishes
// that SetParams and decides under the new Params, as if it had finished.
// The retired state is a full bucket, whose Deficit is retiredBit exactly.
func TestParkedSetParams(t *testing.T) {
	ps, _ := NewParams(1, time.Second, 4)
	to, _ := NewParams(2, time.Second, 3)
	const now = int64(1e12)
	for _, fill := range []int64{0, 4} {
		ops := map[string]func(l *Limiter) any{
			"AllowAt":     func(l *Limiter) any { return l.AllowAt(now) },
			"AllowNAt":    func(l *Limiter) any { r, err := l.AllowNAt(now, 2); return [2]any{r, err} },
			"TakeAt":      func(l *Limiter) any { r, rc, err := l.TakeAt(now, 2); return [3]any{r, rc.N, err} },
			"AllowFracAt": func(l *Limiter) any { r, err := l.AllowFracAt(now, 3, 2); return [2]any{r, err} },
			"ReserveAt":   func(l *Limiter) any { r, err := l.ReserveNAt(now, 2); return [3]any{r.OK, r.Wait, err} },
			"TakeUpToAt":  func(l *Limiter) any { return l.TakeUpToAt(now, 5).N },
			"RemainingAt": func(l *Limiter) any { return l.RemainingAt(now) },
			"TokensAt":    func(l *Limiter) any { return l.TokensAt(now) },
			"Params":      func(l *Limiter) any { return l.Params() },
		}
		for name, op := range ops {
			stopped, done := parked(t, ps, to, now, fill)
			if got, want := op(stopped), op(done); got != want {
				t.Errorf("fill %d, %s on a parked SetParams: %v, want %v", fill, name, got, want)
			}
			if got, want := stopped.Params(), done.Params(); got != want {
				t.Errorf("fill %d, after %s: Params %+v, want %+v", fill, name, got, want)
			}
			gs, ss := stopped.live()
			gd, sd := done.live()
			if ss != sd || gs.ps != gd.ps {
				t.Errorf("fill %d, after %s: state %v, want %v", fill, name, ss, sd)
			}
		}
	}
}

// TestRefundAcrossSetParams: an admission made before a SetParams, parked
// or finished, is not given back: its state is retired, and no state of
// the new generation equals it.
func TestRefundAcrossSetParams(t *testing.T) {
	ps, _ := NewParams(1, time.Second, 4)
	const now = int64(1e12)
	for _, park := range []bool{false, true} {
		l, _ := NewFromParams(ps)
		_, rc, _ := l.TakeAt(now, 2)
		if park {
			g := l.cur.Load()
			nx := &gen{ps: ps, since: now}
			nx.state.Store(0, pending)
			g.next.Store(nx)
			tt, d := g.state.Load()
			g.state.Store(tt, d|retiredBit)
		} else if err := l.SetParamsAt(now, ps); err != nil {
			t.Fatal(err)
		}
		_, before := l.live()
		l.Refund(rc)
		if _, after := l.live(); after != before || l.RemainingAt(now+2) != 2 {
			t.Errorf("parked %v: the refund changed the state %v to %v", park, before, after)
		}
	}
}

// TestDecisionOnARetiredGeneration: a caller that loaded the generation
// before a SetParams and decides after it (emulated by pointing the
// Limiter back at the old generation) moves on to the new one: the old
// generation's cell is retired with its value kept, so it admits nothing.
func TestDecisionOnARetiredGeneration(t *testing.T) {
	ps, _ := NewParams(1, time.Second, 2)
	l, _ := NewFromParams(ps)
	const now = int64(1e12)
	l.AllowNAt(now, 2) // empty
	old := l.cur.Load()
	oldT, oldD := old.state.Load()
	if err := l.SetParamsAt(now, ps); err != nil {
		t.Fatal(err)
	}
	if tt, d := old.state.Load(); tt != oldT || d != oldD|retiredBit {
		t.Fatalf("the old generation holds %d %d, want %d %d|retiredBit", tt, d, oldT, oldD)
	}
	l.cur.Store(old)
	if l.AllowAt(now + 1) {
		t.Fatal("a decision on the old generation admitted from an empty bucket")
	}
	if l.cur.Load() == old {
		t.Fatal("the decision did not move the Limiter on")
	}
}

func TestReserveAndCancelEdges(t *testing.T) {
	var zero Reservation
	if zero.OK || zero.Cancel() || zero.CancelAt(0) {
		t.Fatal("the zero Reservation")
	}
	l, _ := New(1, time.Second, 2)
	if r, err := l.ReserveNAt(0, 0); err != nil || !r.OK || r.Wait != 0 {
		t.Fatalf("ReserveAt(n = 0) = %+v, %v", r, err)
	}
	// The debt may reach 2^62 units exactly, not pass it: a token of 2^30
	// units, a burst of 2^31 tokens (2^61 units), two full reservations.
	ps, _ := NewParams(1, 1<<30, 1<<31)
	s, r, _ := ps.reserve(State{}, 0, 1<<31)
	if !r.OK || r.Wait != 0 {
		t.Fatalf("first reservation: %+v", r)
	}
	s, r, _ = ps.reserve(s, 0, 1<<31)
	if !r.OK || r.Wait != 1<<61 || s.Deficit != maxDeficit {
		t.Fatalf("reservation to a debt of exactly 2^62 units: %+v, state %v", r, s)
	}
	if _, r, _ = ps.reserve(s, 0, 1); r.OK {
		t.Fatalf("reservation past a debt of 2^62 units: %+v", r)
	}
}

func TestWaitDeadlineAtAct(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, _ := New(1, time.Second, 1, WithClock(nanotime.Since()))
		l.Allow()
		// A deadline exactly at the time to act is not sooner than the
		// wait: Wait blocks until then.
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start := time.Now()
		if err := l.WaitN(ctx, 1); err == ErrDeadline || err != nil && !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Wait with the deadline at the time to act: %v", err)
		}
		if d := time.Since(start); d != time.Second {
			t.Fatalf("Wait with the deadline at the time to act returned after %v, want 1s", d)
		}
	})
}

func TestParamEdges(t *testing.T) {
	for _, rate := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		_, err := RateParams(rate, 1)
		var pe *limit.ParamError
		if !errors.As(err, &pe) || pe.Param != "rate" || !strings.Contains(pe.Reason, "finite") {
			t.Errorf("RateParams(%v): %v", rate, err)
		}
	}
	if _, err := RateParams(0, 1); err == nil {
		t.Error("RateParams(0) accepted")
	} else if pe := (*limit.ParamError)(nil); !errors.As(err, &pe) || pe.Reason != "" {
		t.Errorf("RateParams(0): %v", err)
	}
	// A token of 2^62 units: not even a burst of 1 fits, and the error
	// says why; a burst of 0 is simply below the minimum.
	var pe *limit.ParamError
	if _, err := NewParams(1, 1<<62, 1); !errors.As(err, &pe) || pe.Param != "burst" || pe.Max != int64(0) || !strings.Contains(pe.Reason, "2^61") {
		t.Errorf("NewParams(1, 2^62ns, 1): %v", err)
	}
	if _, err := NewParams(1, time.Second, 0); !errors.As(err, &pe) || pe.Param != "burst" || pe.Reason != "" {
		t.Errorf("NewParams(1, 1s, 0): %v", err)
	}
	// The fraction stops at the first convergent within 2^-50 of the
	// float, though later ones fit in 32 bits: 10^6/1000003 (its next
	// convergent's denominator is below 2^32 here).
	x := 1e6 / 1000003 * (1 + 0x1p-51)
	want, _ := NewParams(1e6, 1000003*time.Second, 1)
	if got, err := RateParams(x, 1); err != nil || got != want {
		t.Errorf("RateParams(%v) = %+v %v, want 10^6 per 1000003 s", x, got, err)
	}
	ps, _ := NewParams(1, 4, 1) // 4 units per token
	if _, err := ps.costUnits(1, 0); !errors.As(err, &pe) || pe.Param != "den" {
		t.Errorf("CostUnits(1, 0): %v", err)
	}
	if _, err := ps.costUnits(1<<62, 1); err != limit.ErrCostExceedsBurst {
		t.Errorf("CostUnits(2^62, 1): %v", err) // 2^64 units
	}
	// GiveBack takes k in [1, burst] only: not 0, not a negative k whose
	// units wrap to 1 (k*3 = 1 mod 2^64), and not burst+1 from a state in
	// debt that holds that many taken.
	ps, _ = NewParams(1, 3, 2) // 3 units per token
	s, n := ps.TakeUpTo(State{}, 0, 2)
	for _, k := range []int64{0, -1, -6148914691236517205} {
		if next, units := ps.giveBackLoan(s, s, k); next != s || units != 0 || n != 2 {
			t.Errorf("GiveBack(k = %d) = %v, %d units", k, next, units)
		}
	}
	s, _, _ = ps.reserve(State{}, 0, 2)
	s, _, _ = ps.reserve(s, 0, 2) // 4 tokens taken, 12 units
	if next, units := ps.giveBackLoan(s, s, 3); next != s || units != 0 || s.Deficit != 12 {
		t.Errorf("GiveBack(k = burst+1) from %v = %v, %d units", s, next, units)
	}
}

// TestWaitsAtTheEdges: a very stale now makes the deficit at now pass 64
// bits; its RetryAfter is still the model's, just after 2^64 units and on
// either side of math.MaxInt64 ns.
func TestWaitsAtTheEdges(t *testing.T) {
	ps, _ := NewParams(3, time.Second, 1) // e = 3 units per ns, a token 1e9
	m := newModel(3, time.Second, 1)
	top := int64(math.MaxInt64 - 10)
	s, r, _ := ps.Step(State{}, top, 1)
	if want := m.allow(top, big.NewRat(1, 1)); !r.OK || r != want {
		t.Fatalf("the token at the top: %+v, model %+v", r, want)
	}
	back := []uint64{ // stale by T - u ns
		(1<<64 - 2e9 + 1) / 3,     // (T-u)*e + d + c just past 2^64
		1<<63 - 1 - 333333333,     // a wait of 2^63 - 2/3 ns
		1<<63 - 1 - 333333333 - 1, // 2^63 - 1 - 2/3
		1<<63 - 1 - 333333333 - 2, // 2^63 - 2 - 2/3: MaxInt64 - 1
		1<<63 - 1 - 333333333 + 1, // 2^63 + 1/3
		(1<<64-2e9+1)/3 + 1,       // and around the first
		(1<<64-2e9+1)/3 - 1,
	}
	longest := false
	for _, b := range back {
		now := int64((s.T - b) ^ signBit)
		_, r, _ := ps.Step(s, now, 1)
		if want := m.allow(now, big.NewRat(1, 1)); r != want {
			t.Fatalf("stale by %d ns: %+v, model %+v", b, r, want)
		}
		longest = longest || r.RetryAfter == math.MaxInt64-1
	}
	if !longest {
		t.Fatal("no wait of MaxInt64-1 ns: the nows miss the boundary")
	}
}
