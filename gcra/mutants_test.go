package gcra

import (
	"math"
	"testing"
	"time"

	"github.com/cellrate/cellrate/internal/gcrastep"
)

// TestLastTATBeforeTheEnd: at an interval of 1 ns and a burst of 1, an
// admission at MaxInt64-3 stores the last TAT a live generation may hold
// (two steps before the end of int64 time): AllowAt, AllowNAt and
// ReserveNAt admit
// it, a second request there is denied (not mistaken for a retired TAT),
// and a request one ns later, whose TAT would pass it, is refused.
func TestLastTATBeforeTheEnd(t *testing.T) {
	const now = math.MaxInt64 - 3
	mk := func() *Limiter {
		l, err := New(1, time.Nanosecond, 1)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	l := mk()
	if !l.AllowAt(now) {
		t.Fatal("AllowAt(MaxInt64-3) on a full limiter denied")
	}
	if l.AllowAt(now) {
		t.Error("second AllowAt(MaxInt64-3) admitted past the burst")
	}
	if r, err := l.ReserveNAt(now, 1); err != nil || r.OK {
		t.Errorf("ReserveNAt after it = %+v, %v; want not OK (the next TAT passes the end)", r, err)
	}
	if r, err := mk().AllowNAt(now, 1); err != nil || !r.OK {
		t.Errorf("AllowNAt(MaxInt64-3) on a full limiter = %+v, %v; want OK", r, err)
	}
	if r, err := mk().ReserveNAt(now, 1); err != nil || !r.OK || r.Wait != 0 {
		t.Errorf("ReserveNAt(MaxInt64-3) on a full limiter = %+v, %v; want OK at once", r, err)
	}
	if mk().AllowAt(now + 1) {
		t.Error("AllowAt(MaxInt64-2) admitted a TAT past the last one")
	}
	if r, err := mk().ReserveNAt(now+1, 1); err != nil || r.OK {
		t.Errorf("ReserveNAt(MaxInt64-2) = %+v, %v; want not OK", r, err)
	}
}

// retireOnly runs SetRateAt(now, rate) on l up to the retirement of the
// current generation, and stops there: the state a decision meets while the
// goroutine running SetRateAt is descheduled before it finishes.
func retireOnly(t *testing.T, l *Limiter, now int64, rate float64) {
	t.Helper()
	g, _ := l.live()
	ps, err := gcrastep.RateParams(rate, g.ps.Burst())
	if err != nil {
		t.Fatal(err)
	}
	nx := &gen{ps: ps, id: g.id + 1}
	nx.tat.Store(pending)
	if !g.next.CompareAndSwap(nil, nx) {
		t.Fatal("a retirement is in progress already")
	}
	g.at = now
	g.from.Store(g.tat.Load())
	g.tat.Store(retired)
}

// TestDecisionFinishesARetirement: a decision that meets a generation
// retired by a SetRateAt that has not finished finishes the retirement
// itself, and decides as it would after the whole SetRateAt, whether the
// generation retired is the first one or a later one.
func TestDecisionFinishesARetirement(t *testing.T) {
	for _, before := range []int{0, 1, 2} { // SetRates completed first
		mk := func() *Limiter {
			l, err := New(2, time.Second, 4)
			if err != nil {
				t.Fatal(err)
			}
			for i := range before {
				if err := l.SetRateAt(int64(i+1)*1e6, float64(3+i)); err != nil {
					t.Fatal(err)
				}
			}
			for range 3 {
				l.AllowAt(5e6)
			}
			return l
		}
		half, whole := mk(), mk()
		retireOnly(t, half, 6e6, 1)
		if err := whole.SetRateAt(6e6, 1); err != nil {
			t.Fatal(err)
		}
		done := make(chan [2]int64, 1)
		go func() {
			var got [2]int64
			for _, now := range []int64{7e6, 1.1e9, 2.2e9} {
				r, _ := half.AllowNAt(now, 1)
				w, _ := whole.AllowNAt(now, 1)
				if r != w {
					got = [2]int64{now, 1}
					break
				}
			}
			done <- got
		}()
		select {
		case got := <-done:
			if got[1] != 0 {
				t.Errorf("after %d SetRates: decisions at %d differ from the finished SetRate's", before, got[0])
			}
		case <-time.After(10 * time.Second): // only a decision that never finishes the retirement
			t.Fatalf("after %d SetRates: a decision meeting a retirement in progress did not return", before)
		}
		if c := half.cur.Load(); c == nil || c.tat.Load() > maxTAT {
			t.Errorf("after %d SetRates: the decision left the retirement unfinished", before)
		}
	}
}
