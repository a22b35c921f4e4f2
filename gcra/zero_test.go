package gcra

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cellrate/cellrate/internal/limittest"
	"github.com/cellrate/cellrate/limit"
)

// TestZeroLimiter: the zero Limiter has burst 0. Every way in denies, none
// panics, and nothing it reports (Remaining, Tokens, Interval) is more than
// 0 or NaN, at any now.
func TestZeroLimiter(t *testing.T) {
	var l Limiter
	limittest.ZeroMember(t, "gcra.Limiter", &l)
	for _, now := range limittest.ZeroTimes {
		if r, err := l.ReserveNAt(now, 1); r.OK || !errors.Is(err, limit.ErrCostExceedsBurst) {
			t.Fatalf("ReserveNAt(%d, 1) = %+v, %v", now, r, err)
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
	if r, err := l.Reserve(); r.OK || !errors.Is(err, limit.ErrCostExceedsBurst) {
		t.Fatalf("Reserve = %+v, %v", r, err)
	}
	// A receipt from another limiter changes nothing.
	other, _ := New(1, time.Second, 1)
	_, rc, _ := other.TakeAt(0, 1)
	l.Refund(rc)
	if l.AllowAt(0) || l.RemainingAt(0) != 0 {
		t.Fatal("admits after a stray Refund")
	}
	if ps := l.ps; ps.Burst() != 0 || ps.Interval() != 0 {
		t.Fatalf("zero Params: burst %d, interval %v", ps.Burst(), ps.Interval())
	}
}
