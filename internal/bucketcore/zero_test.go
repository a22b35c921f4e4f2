package bucketcore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cellrate/cellrate/internal/limittest"
	"github.com/cellrate/cellrate/limit"
)

// TestZeroLimiter: the zero Limiter has burst 0. Every way in denies, none
// panics or writes the shared zero generation, and nothing it reports is
// above 0 or NaN; SetParams makes it a full bucket.
func TestZeroLimiter(t *testing.T) {
	var l Limiter
	limittest.ZeroMember(t, "bucket.Limiter", &l)
	for _, now := range limittest.ZeroTimes {
		if r, err := l.AllowFracAt(now, 1, 1000); r.OK || !errors.Is(err, limit.ErrCostExceedsBurst) {
			t.Fatalf("AllowFracAt(%d, 1, 1000) = %+v, %v", now, r, err)
		}
		if r, err := l.ReserveNAt(now, 1); r.OK || !errors.Is(err, limit.ErrCostExceedsBurst) {
			t.Fatalf("ReserveNAt(%d, 1) = %+v, %v", now, r, err)
		}
		if loan := l.TakeUpToAt(now, 5); loan.N != 0 {
			t.Fatalf("TakeUpToAt(%d, 5) took %d", now, loan.N)
		}
		if l.RemainingAt(now) != 0 || l.TokensAt(now) != 0 {
			t.Fatalf("at %d: Remaining %d, Tokens %v", now, l.RemainingAt(now), l.TokensAt(now))
		}
	}
	if l.Allow() || l.Remaining() != 0 || l.Tokens() != 0 {
		t.Fatal("the plain methods on the zero Limiter")
	}
	if err := l.Wait(context.Background()); !errors.Is(err, limit.ErrCostExceedsBurst) {
		t.Fatalf("Wait = %v", err)
	}
	// A receipt naming the zero state writes nothing.
	l.Refund(limit.Receipt{N: 1, Before: [2]uint64{1, 2}})
	l.Refund(limit.Receipt{N: 1, Before: [2]uint64{1, 2}, After: [2]uint64{0, 0}})
	if r, err := l.ReserveNAt(0, 0); !r.OK || r.CancelAt(0) || err != nil {
		t.Fatalf("ReserveNAt(0, 0) = %+v, %v", r, err)
	}
	if t0, d0 := zeroGen.state.Load(); t0 != 0 || d0 != 0 || zeroGen.next.Load() != nil {
		t.Fatalf("the zero generation was written: %d %d", t0, d0)
	}
	if ps := l.Params(); ps.Burst() != 0 {
		t.Fatalf("Params().Burst() = %d", ps.Burst())
	}
	// SetRate keeps a burst of 0, refused; SetParams starts the bucket full.
	var pe *limit.ParamError
	if err := l.SetRateAt(0, 1, time.Second); !errors.As(err, &pe) {
		t.Fatalf("SetRateAt on the zero Limiter: %v", err)
	}
	// SetBurst has no rate to keep: refused, naming the burst, not a panic.
	for _, burst := range []int64{0, 1, 2} {
		if err := l.SetBurstAt(0, burst); !errors.As(err, &pe) || pe.Param != "burst" {
			t.Fatalf("SetBurstAt(0, %d) on the zero Limiter: %v", burst, err)
		}
	}
	if err := l.SetParamsAt(0, Params{}); !errors.As(err, &pe) {
		t.Fatalf("SetParamsAt(zero Params): %v", err)
	}
	ps, _ := NewParams(1, time.Second, 2)
	if err := l.SetParamsAt(0, ps); err != nil {
		t.Fatal(err)
	}
	if r, err := l.AllowNAt(0, 2); !r.OK || err != nil || l.AllowAt(0) || l.Params() != ps {
		t.Fatalf("after SetParams: want a full bucket of 2, got %+v, %v", r, err)
	}
	var other Limiter
	if other.AllowAt(0) || other.RemainingAt(0) != 0 {
		t.Fatal("SetParams on one zero Limiter changed another")
	}
}

// TestZeroParams: the zero Params' steps admit nothing and report 0 tokens.
func TestZeroParams(t *testing.T) {
	var ps Params
	if _, err := ps.costUnits(1, 2); !errors.Is(err, limit.ErrCostExceedsBurst) {
		t.Fatalf("CostUnits(1, 2) = %v", err)
	}
	if c, err := ps.costUnits(0, 2); c != 0 || err != nil {
		t.Fatalf("CostUnits(0, 2) = %d, %v", c, err)
	}
	if ps.Tokens(State{}, 0) != 0 || ps.Remaining(State{}, 0) != 0 {
		t.Fatal("the zero Params hold tokens")
	}
	if _, r, _ := ps.Step(State{}, 0, 1); r.OK {
		t.Fatal("Step admitted")
	}
	if _, err := NewFromParams(ps); err == nil {
		t.Fatal("NewFromParams took the zero Params")
	}
}
