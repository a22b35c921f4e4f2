package pacer

import (
	"context"
	"errors"
	"testing"

	"github.com/cellrate/cellrate/internal/limittest"
	"github.com/cellrate/cellrate/limit"
)

// TestZeroPacer: the zero Pacer hands out no slot, at any now (a Wait of
// limit.Never, so sleeping it never acts), and its Wait
// returns ErrNoRate at once, with its plain methods reading nanotime.Now.
func TestZeroPacer(t *testing.T) {
	var p Pacer
	for _, now := range limittest.ZeroTimes {
		if r := p.ReserveAt(now); r.OK || r.Wait != limit.Never || r.Cancel() {
			t.Fatalf("ReserveAt(%d) = %+v", now, r)
		}
	}
	if r := p.Reserve(); r.OK || r.Wait != limit.Never {
		t.Fatalf("Reserve() = %+v", r)
	}
	if err := p.Wait(context.Background()); !errors.Is(err, ErrNoRate) {
		t.Fatalf("Wait = %v, want ErrNoRate", err)
	}
	if p.Slack() != 0 || p.tat.Load() != 0 {
		t.Fatal("the zero Pacer changed")
	}
}
