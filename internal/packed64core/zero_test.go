package packed64core

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/cellrate/cellrate/internal/limittest"
	"github.com/cellrate/cellrate/limit"
)

// TestZeroBucketWindow: the zero Bucket and Window have burst (limit) 0 and
// admit nothing by any method; the plain methods read nanotime.Now.
func TestZeroBucketWindow(t *testing.T) {
	var b Bucket
	limittest.ZeroMember(t, "packed64.Bucket", &b)
	var w Window
	limittest.ZeroMember(t, "packed64.Window", &w)
	for _, now := range limittest.ZeroTimes {
		if b.RemainingAt(now) != 0 || b.TokensAt(now) != 0 || w.RemainingAt(now) != 0 || w.EstimateAt(now) != 0 {
			t.Fatalf("at %d: Remaining %d and %d, Tokens %v, Estimate %v", now, b.RemainingAt(now), w.RemainingAt(now), b.TokensAt(now), w.EstimateAt(now))
		}
	}
	if b.Allow() || b.Remaining() != 0 || b.Tokens() != 0 || w.Allow() || w.Remaining() != 0 || w.Estimate() != 0 {
		t.Fatal("the plain methods of the zero Bucket or Window")
	}
}

// TestZeroTables: the zero Buckets and Windows have Len 0, so every i is
// out of range and panics as an empty slice's index does; nothing else does.
func TestZeroTables(t *testing.T) {
	var b Buckets
	var w Windows
	if b.Len() != 0 || w.Len() != 0 || b.Params().Burst() != 0 || w.Params().Limit() != 0 {
		t.Fatal("the zero tables are not empty")
	}
	for name, f := range map[string]func(){
		"Buckets.Allow":       func() { b.Allow(0) },
		"Buckets.AllowN":      func() { b.AllowN(0, 1) },
		"Buckets.RemainingAt": func() { b.RemainingAt(0, 0) },
		"Windows.Allow":       func() { w.Allow(0) },
		"Windows.AllowN":      func() { w.AllowN(0, 1) },
		"Windows.EstimateAt":  func() { w.EstimateAt(0, 0) },
	} {
		if got := indexPanic(f); !got {
			t.Errorf("%s on the zero table: no index-out-of-range panic", name)
		}
	}
}

// indexPanic reports whether f panics with an index out of range.
func indexPanic(f func()) (got bool) {
	defer func() {
		e, ok := recover().(interface{ RuntimeError() })
		got = ok && e != nil
	}()
	f()
	return false
}

// TestTableCount: a count outside [1, maxCount] is a *limit.ParamError
// naming count, never make's panic.
func TestTableCount(t *testing.T) {
	for _, count := range []int{0, -1, math.MinInt, maxCount + 1, math.MaxInt} {
		var pe *limit.ParamError
		if _, err := NewBuckets(count, 1, time.Second, 1); !errors.As(err, &pe) || pe.Param != "count" || pe.Value != count || pe.Max != maxCount {
			t.Errorf("NewBuckets(%d) = %v", count, err)
		}
		if _, err := NewWindows(count, 1, time.Second); !errors.As(err, &pe) || pe.Param != "count" || pe.Value != count || pe.Max != maxCount {
			t.Errorf("NewWindows(%d) = %v", count, err)
		}
	}
	if b, err := NewBuckets(3, 1, time.Second, 1); err != nil || b.Len() != 3 {
		t.Fatalf("NewBuckets(3) = %v", err)
	}
}
