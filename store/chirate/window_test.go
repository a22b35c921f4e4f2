package chirate

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"testing"
	"time"

	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/step"
)

// Windows start at multiples of the window on the clock: every time from
// a start to just before the next start names the same window, on either
// side of 1970.
func TestWindowOfAnyTime(t *testing.T) {
	for _, w := range []time.Duration{7 * time.Second, time.Minute, 3*time.Hour + 1} {
		c := newCounter(t, 0, w)
		for _, k := range []int64{-3, -1, 0, 5, int64(1.8e18 / w)} {
			key := "k" + time.Duration(k).String()
			start := time.Unix(0, k*int64(w))
			for _, inc := range []struct {
				at time.Time
				n  int
			}{{start, 1}, {start.Add(w - 1), 2}, {start.Add(w / 2), 4}, {start.Add(-1), 8}} {
				if err := c.IncrementBy(key, inc.at, inc.n); err != nil {
					t.Fatalf("window %v, start %v: IncrementBy at %+d ns: %v", w, start, inc.at.Sub(start), err)
				}
			}
			for _, g := range []struct {
				at         time.Time
				curr, prev int
			}{{start, 7, 8}, {start.Add(w - 1), 7, 8}, {start.Add(w), 0, 7}, {start.Add(2*w - 1), 0, 7}} {
				curr, prev, err := c.Get(key, g.at, g.at.Add(-w))
				if err != nil || curr != g.curr || prev != g.prev {
					t.Errorf("window %v, start %v: Get at %+d ns = %d, %d, %v; want %d, %d", w, start, g.at.Sub(start), curr, prev, err, g.curr, g.prev)
				}
			}
		}
	}
}

// The windows served at the ends of int64 time: window i (of the table's
// unit u, the window rounded up) is served when windows i-2 and i+2 still
// start within int64 nanoseconds, so that every time the table reads for
// it and for the windows next to it is one; it counts exactly up to there.
// Past it every call returns a *limit.ParamError for the window start.
func TestWindowsAtTheEndsOfTime(t *testing.T) {
	inInt64 := func(x *big.Int) bool { return x.IsInt64() }
	for _, w := range []time.Duration{1, time.Millisecond, 7 * time.Second, time.Minute, 3*time.Hour + 1, 1 << 40, 1 << 61} {
		p, err := step.NewPackedWindow(MaxCount, w)
		if err != nil {
			t.Fatal(err)
		}
		u := big.NewInt(int64(p.Window()))
		served := func(i int64) bool {
			lo := new(big.Int).Sub(big.NewInt(i), big.NewInt(2))
			hi := new(big.Int).Add(big.NewInt(i), big.NewInt(2))
			return inInt64(lo.Mul(lo, u)) && inInt64(hi.Mul(hi, u))
		}
		top, bottom := math.MaxInt64/int64(p.Window()), math.MinInt64/int64(p.Window())
		var near []int64
		for d := int64(-4); d <= 4; d++ {
			for _, i := range []*big.Int{big.NewInt(top), big.NewInt(bottom)} {
				i.Add(i, big.NewInt(d))
				if start := new(big.Int).Mul(i, big.NewInt(int64(w))); inInt64(start) {
					near = append(near, i.Int64()) // window i starts within int64 ns
				}
			}
		}
		ends := map[bool]int{}
		for _, i := range near {
			at := time.Unix(0, i*int64(w))
			c := newCounter(t, 4, w)
			ends[served(i)]++
			if !served(i) {
				what := fmt.Sprintf("window %v, index %d", w, i)
				wantWindowStartError(t, what, c.IncrementBy("k", at, 1))
				_, _, err := c.Get("k", at, at.Add(-w))
				wantWindowStartError(t, what, err)
				continue
			}
			var prev int
			if served(i - 1) {
				if err := c.IncrementBy("k", at.Add(-w), 2); err != nil {
					t.Fatalf("window %v, index %d: IncrementBy on the window before: %v", w, i, err)
				}
				prev = 2
			}
			if err := c.IncrementBy("k", at, 3); err != nil {
				t.Fatalf("window %v, index %d: %v", w, i, err)
			}
			if curr, pr, err := c.Get("k", at, at.Add(-w)); err != nil || curr != 3 || pr != prev {
				t.Errorf("window %v, index %d: Get = %d, %d, %v; want 3, %d", w, i, curr, pr, err, prev)
			}
			if served(i + 1) {
				if curr, pr, err := c.Get("k", at.Add(w), at); err != nil || curr != 0 || pr != 3 {
					t.Errorf("window %v, index %d: Get on the window after = %d, %d, %v; want 0, 3", w, i, curr, pr, err)
				}
			}
		}
		if ends[true] < 2 || ends[false] < 2 {
			t.Errorf("window %v: %d windows served and %d refused near the ends; want both at each end", w, ends[true], ends[false])
		}
	}
}

func wantWindowStartError(t *testing.T, what string, err error) {
	t.Helper()
	var pe *limit.ParamError
	if !errors.As(err, &pe) || pe.Param != "window start" {
		t.Errorf("%s: %v; want a ParamError for the window start", what, err)
	}
}

// Times outside int64 nanoseconds (before 1678 or after 2262, the zero
// Time among them) are refused as window starts, and count nothing: not in
// the window their wrapped nanoseconds would name, where a time in 1600
// would have counted in 2184 and denied every key of today.
func TestTimesPastInt64(t *testing.T) {
	for _, w := range []time.Duration{1, time.Minute, 1 << 61} {
		c := newCounter(t, 0, w)
		now := time.Unix(1.8e9, 0).Truncate(w)
		for _, at := range []time.Time{
			{},
			time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC),
			time.Unix(0, math.MinInt64).Add(-1),
			time.Unix(0, math.MaxInt64).Add(1),
			time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC),
			time.Unix(1<<62, 0),
			time.Unix(-1<<62, 0),
		} {
			what := fmt.Sprintf("window %v, start %v", w, at)
			wantWindowStartError(t, what, c.IncrementBy("k", at, 1))
			_, _, err := c.Get("k", at, at.Add(-w))
			wantWindowStartError(t, what, err)
		}
		if err := c.IncrementBy("k", now, 5); err != nil {
			t.Fatalf("window %v: %v", w, err)
		}
		if curr, prev, err := c.Get("k", now, now.Add(-w)); err != nil || curr != 5 || prev != 0 {
			t.Errorf("window %v: Get = %d, %d, %v; want 5, 0", w, curr, prev, err)
		}
	}
}
