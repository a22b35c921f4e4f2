package window

import (
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cellrate/cellrate/internal/bound"
	"github.com/cellrate/cellrate/limit"
)

// TestEnds runs the counter at both ends of int64 time: windows that start
// within W of math.MaxInt64, stale times down to math.MinInt64, and waits
// that pass math.MaxInt64 (RetryAfter saturates, never wraps).
func TestEnds(t *testing.T) {
	const max, min = math.MaxInt64, math.MinInt64
	// A wait of start - now + 2W: 2^63 + 2^63 + 2^62 ns, past 64 bits.
	p, _ := NewParams(1, 1<<62+1<<61)
	s, r, _ := p.Step(State{}, 0, 1)
	if !r.OK {
		t.Fatal("first unit refused")
	}
	if _, r, _ = p.Step(s, min, 1); r.OK || r.RetryAfter != max {
		t.Fatalf("at MinInt64 after a unit at 0: %+v, want RetryAfter MaxInt64", r)
	}
	// A window starting at MaxInt64 holds its limit, and its end is
	// never formed.
	p, _ = NewParams(3, time.Second)
	s = State{}
	for i := range 4 {
		next, r, _ := p.Step(s, max, 1)
		if r.OK != (i < 3) {
			t.Fatalf("unit %d at MaxInt64: %+v", i, r)
		}
		if r.OK {
			s = next
		} else if r.RetryAfter != max {
			t.Fatalf("RetryAfter at the end: %d", r.RetryAfter)
		}
	}
	if s.Start != max || s.Cur != 3 {
		t.Fatalf("state %+v", s)
	}
	// Stale times before it: within a window counted in Prev (decided as
	// at Start, where 3 is full), earlier nothing.
	for _, now := range []int64{max - 1, max - int64(time.Second), max - int64(time.Second) - 1, min, 0} {
		if _, r, _ := p.Step(s, now, 1); r.OK {
			t.Fatalf("stale %d admitted on a full window", now)
		}
	}
	// From MinInt64, a window of MaxInt64 ns: the next window starts at
	// -1, the one after at MaxInt64-1.
	p, _ = NewParams(2, max)
	s = State{}
	var uses []bound.Use
	for _, now := range []int64{min, min, min + 5, -2, -1, 0, max - 2, max - 1, max, max} {
		next, r, _ := p.Step(s, now, 1)
		if r.OK {
			s = next
			uses = append(uses, bound.Use{At: now, Cost: 1})
		} else if r.RetryAfter <= 0 {
			t.Fatalf("denial at %d with RetryAfter %d", now, r.RetryAfter)
		}
	}
	if err := bound.Check(uses, 4, 2, uint64(max)); err != nil {
		t.Fatal(err)
	}
	if len(uses) < 4 {
		t.Fatalf("admitted only %v", uses)
	}
}

// TestBoundAtEnds is TestBoundStaleTimes' check on schedules pinned near
// either end of int64 time, through Step and a Limiter.
func TestBoundAtEnds(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for run := range 40 {
		l := 1 + rng.Int64N(8)
		win := int64(1 + rng.Int64N(1<<20))
		if run%4 == 3 {
			win = 1 << (40 + rng.IntN(22))
		}
		lim, _ := New(l, time.Duration(win))
		var uses []bound.Use
		for range 300 {
			var now int64
			if run%2 == 0 {
				now = math.MaxInt64 - rng.Int64N(3*win)
			} else {
				now = math.MinInt64 + rng.Int64N(3*win)
			}
			n := 1 + rng.Int64N(l)
			if r, _ := lim.AllowNAt(now, n); r.OK {
				uses = append(uses, bound.Use{At: now, Cost: n})
			} else if r.RetryAfter <= 0 {
				t.Fatalf("denial with RetryAfter %d", r.RetryAfter)
			}
		}
		if err := bound.Check(uses, 2*uint64(l), uint64(l), uint64(win)); err != nil {
			t.Fatalf("limit %d, window %d: %v", l, win, err)
		}
	}
}

func TestRefund(t *testing.T) {
	l, _ := New(4, time.Second)
	l.AllowAt(10)
	before := l.State()
	r, rc, err := l.TakeAt(20, 2)
	if !r.OK || err != nil || rc.N != 2 {
		t.Fatalf("TakeAt = %+v %+v %v", r, rc, err)
	}
	l.Refund(rc)
	if l.State() != before {
		t.Fatalf("state %+v after the refund, want %+v", l.State(), before)
	}
	_, rc, _ = l.TakeAt(20, 2)
	l.AllowAt(30)
	after := l.State()
	l.Refund(rc)
	if l.State() != after {
		t.Fatal("a refund after another admission gave units back")
	}
	if r, rc, _ := l.TakeAt(30, 2); r.OK || rc != (limit.Receipt{}) {
		t.Fatalf("denial: %+v %+v", r, rc)
	}
	// n = 0 takes nothing, so there is nothing to refund.
	if r, rc, _ := l.TakeAt(30, 0); !r.OK || rc != (limit.Receipt{}) || l.State() != after {
		t.Fatalf("n = 0: %+v %+v", r, rc)
	}
	l.Refund(limit.Receipt{})
	if l.State() != after {
		t.Fatal("the zero Receipt refunded")
	}
}

// TestConcurrentRefund: goroutines take and refund at random on one
// Limiter while others admit; the bound holds over the units not refunded.
func TestConcurrentRefund(t *testing.T) {
	const l, w = 4, int64(time.Microsecond)
	lim, _ := New(l, time.Duration(w))
	var clock atomic.Int64
	const G = 6
	per := make([][]bound.Use, G)
	var wg sync.WaitGroup
	for g := range G {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 17))
			for range 3000 {
				now := clock.Add(rng.Int64N(w / 20))
				n := 1 + rng.Int64N(2)
				r, rc, _ := lim.TakeAt(now, n)
				if !r.OK {
					continue
				}
				if g%2 == 0 && rng.IntN(2) == 0 {
					lim.Refund(rc)
					continue
				}
				per[g] = append(per[g], bound.Use{At: now, Cost: n})
			}
		})
	}
	wg.Wait()
	var all []bound.Use
	for _, p := range per {
		all = append(all, p...)
	}
	if err := bound.Check(all, 2*l, l, uint64(w)); err != nil {
		t.Fatal(err)
	}
}

func TestRemainingAndClock(t *testing.T) {
	now := int64(0)
	l, err := New(4, time.Second, WithClock(func() int64 { return now }))
	if err != nil {
		t.Fatal(err)
	}
	if l.Remaining() != 4 {
		t.Fatal("a new limiter is not empty")
	}
	if r, _ := l.AllowN(3); !r.OK || r.Remaining != 1 || l.Remaining() != 1 || !l.Allow() || l.Allow() {
		t.Fatal("the clock was not read")
	}
	now = int64(1500 * time.Millisecond) // half of the previous window's 4 still counts
	if got := l.Remaining(); got != 2 || l.Estimate() != 2 {
		t.Fatalf("Remaining %d, Estimate %v: want 2 and 2", got, l.Estimate())
	}
	for _, c := range []struct{ now, want int64 }{{int64(1500 * time.Millisecond), 2}, {int64(3 * time.Second), 4}, {-int64(2 * time.Second), 0}} {
		if got := l.RemainingAt(c.now); got != c.want {
			t.Errorf("RemainingAt(%d) = %d, want %d", c.now, got, c.want)
		}
	}
	var zero Limiter
	if zero.RemainingAt(0) != 0 {
		t.Fatal("zero Limiter has room")
	}
}
