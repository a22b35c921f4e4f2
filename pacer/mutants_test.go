package pacer

import (
	"context"
	"errors"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/nanotime"
)

// New's refusals name the pacer's parameter with the value given: a slack
// gcra refuses as a burst is the slack, other refusals keep their name.
func TestNewRefusalNamesTheValue(t *testing.T) {
	for _, c := range []struct {
		events int64
		period time.Duration
		slack  int64
		param  string
		value  any
	}{
		{1, time.Second, -1, "slack", int64(-1)},
		{1, time.Second, -5, "slack", int64(-5)},
		{1, time.Second, math.MaxInt64, "slack", int64(math.MaxInt64)},
		{1, time.Hour, 1 << 40, "slack", int64(1<<40 + 1)},
		{2, 1, 0, "events", nil},
	} {
		_, err := New(c.events, c.period, WithSlack(c.slack))
		var pe *limit.ParamError
		if !errors.As(err, &pe) || pe.Pkg != "pacer" || pe.Param != c.param || c.value != nil && pe.Value != c.value {
			t.Errorf("New(%d, %v, slack %d) = %#v, want Param %q Value %v", c.events, c.period, c.slack, err, c.param, c.value)
		}
	}
	if _, err := New(1, time.Nanosecond); err != nil {
		t.Errorf("one event per ns: %v", err)
	}
}

// Near the end of int64 time the last slot given is the last whose
// interval ends by MaxInt64. A request far behind a schedule near the end,
// whose wait does not fit a Duration, is refused and takes nothing.
func TestSlotsAtTheEnd(t *testing.T) {
	p := mustNew(t, 1, time.Second)
	now := int64(math.MaxInt64) - 3*int64(time.Second)
	for i, want := range []time.Duration{0, time.Second} {
		if r := p.ReserveAt(now); !r.OK || r.Wait != want {
			t.Fatalf("slot %d: %+v, want a wait of %v", i, r, want)
		}
	}
	// The next slot, at MaxInt64-1s, is 1.5s more than MaxInt64 ns away.
	if r := p.ReserveAt(-int64(1500 * time.Millisecond)); r.OK {
		t.Fatalf("a wait past MaxInt64: %+v", r)
	}
	if r := p.ReserveAt(now); !r.OK || r.Wait != 2*time.Second {
		t.Fatalf("the last slot: %+v", r)
	}
	if r := p.ReserveAt(now); r.OK {
		t.Fatalf("a slot past the end: %+v", r)
	}
}

// Wait past the end of time returns ErrEndOfTime, not the zero Pacer's
// ErrNoRate.
func TestWaitEndOfTime(t *testing.T) {
	p := mustNew(t, 1, time.Second, WithClock(func() int64 { return math.MaxInt64 - int64(1500*time.Millisecond) }))
	if err := p.Wait(context.Background()); err != nil {
		t.Fatalf("first Wait: %v", err)
	}
	if err := p.Wait(context.Background()); err != ErrEndOfTime {
		t.Fatalf("Wait past the end: %v", err)
	}
}

// A deadline exactly at the slot is not before it: Wait sleeps until the
// slot instead of returning ErrDeadline at once.
func TestDeadlineAtTheSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clock := nanotime.Since()
		p := mustNew(t, 1, time.Second, WithClock(clock))
		p.Wait(context.Background()) // slot 0
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		err := p.Wait(ctx)
		if clock() != int64(time.Second) || err != nil && !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Wait returned %v at %v, want nil or the deadline at 1s", err, time.Duration(clock()))
		}
	})
}
