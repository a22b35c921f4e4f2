package adaptive

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/cellrate/cellrate/limit"
)

// New accepts the ends of its ranges: k = 1, and 1 and 1024 buckets.
func TestNewAcceptsTheBounds(t *testing.T) {
	for _, c := range []struct {
		k       float64
		buckets int
	}{{1, 10}, {2, 1}, {2, 1024}} {
		if _, err := New(c.k, time.Second, WithBuckets(c.buckets)); err != nil {
			t.Errorf("k %v, %d buckets: %v", c.k, c.buckets, err)
		}
	}
}

// A request is rejected when the draw is below p: a draw of exactly p
// sends it (so the rejection's probability is p, not more).
func TestDrawOfExactlyP(t *testing.T) {
	th := mustNew(t, 2, time.Minute, WithRand(func() uint64 { return 1 << 63 })) // a draw of 1/2
	th.AllowAt(sec)                                                              // p = 0
	if p := th.rejectProbabilityAt(sec); p != 0.5 {
		t.Fatalf("p = %v, want 1/2", p)
	}
	if !th.AllowAt(sec) {
		t.Fatal("a draw of exactly p rejected")
	}
}

// At 1ns buckets near the start of int64 time, a window that reaches back
// to bucket math.MinInt64 counts the requests in it; one past it does not.
func TestWindowAtTheStartOfTime(t *testing.T) {
	const nb = 10
	th := mustNew(t, 2, nb, WithBuckets(nb)) // 1ns buckets
	th.AllowAt(math.MinInt64)
	th.AllowAt(math.MinInt64)
	th.AllowAt(math.MinInt64 + 1)
	for k := int64(1); k < nb; k++ {
		if req, _ := th.countsAt(math.MinInt64 + k); req != 3 {
			t.Errorf("at MinInt64+%d: %d requests, want 3", k, req)
		}
	}
	if req, _ := th.countsAt(math.MinInt64 + nb); req != 1 {
		t.Errorf("at MinInt64+%d: %d requests, want the 1 at MinInt64+1", nb, req)
	}
	if req, _ := th.countsAt(math.MinInt64 + nb + 1); req != 0 {
		t.Errorf("at MinInt64+%d: %d requests, want 0", nb+1, req)
	}
}

// NewAIMD's first interval ends one interval after its clock's now: a
// record before that judges nothing, the first at it judges.
func TestAIMDFirstInterval(t *testing.T) {
	r := &recorder{}
	a := mustAIMD(t, r) // now 0
	a.RecordAt(iv/2, false)
	if got := a.Rate(); got != 100 {
		t.Fatalf("rate %v before the first interval ended, want 100", got)
	}
	a.RecordAt(iv, true)
	if got := a.Rate(); got != 50 {
		t.Fatalf("rate %v after a bad first interval, want 50", got)
	}
}

// NewAIMD accepts rates at the ends of their ranges (minRate = maxRate,
// initial at either) and names maxRate when it is 0.
func TestAIMDRateBounds(t *testing.T) {
	r := &recorder{}
	for _, c := range [][3]float64{{5, 5, 5}, {5, 1, 5}, {1, 1, 5}} {
		if _, err := NewAIMD(r, c[0], c[1], c[2], 1, 0.5); err != nil {
			t.Errorf("initial %v in [%v, %v]: %v", c[0], c[1], c[2], err)
		}
	}
	_, err := NewAIMD(r, 1, 1, 0, 1, 0.5)
	var pe *limit.ParamError
	if !errors.As(err, &pe) || pe.Param != "maxRate" {
		t.Errorf("maxRate 0: %v", err)
	}
}

// An option of the other constructor is refused with a reason that names
// the constructor it belongs to.
func TestOptionOfTheOtherConstructor(t *testing.T) {
	_, err := NewAIMD(&recorder{}, 100, 10, 200, 5, 0.5, WithBuckets(3))
	var pe *limit.ParamError
	if !errors.As(err, &pe) || pe.Param != "option" || pe.Reason != "a Throttle's option, for New" {
		t.Errorf("NewAIMD with WithBuckets: %v", err)
	}
	_, err = New(2, time.Second, WithTolerance(0.1))
	if !errors.As(err, &pe) || pe.Param != "option" || pe.Reason != "an AIMD's option, for NewAIMD" {
		t.Errorf("New with WithTolerance: %v", err)
	}
}
