package wait

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

var errRefused, errDeadline = errors.New("refused"), errors.New("deadline")

// fake is a reservation: w ns to wait, granted when ok; cancelled records
// the now of each cancel.
type fake struct {
	w         int64
	ok        bool
	cancelled []int64
}

func run(ctx context.Context, f *fake, clock func() int64) error {
	var w int64
	return For(ctx, clock, func(now int64) (int64, bool, error) {
		w = f.w
		return w, f.ok, nil
	}, func(now int64) { f.cancelled = append(f.cancelled, now) }, errRefused, errDeadline)
}

func TestPaths(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := time.Now()
		clock := func() int64 { return int64(time.Since(base)) }
		bg := context.Background()
		if err := run(bg, &fake{ok: false}, clock); err != errRefused {
			t.Fatalf("refused: %v", err)
		}
		if err := run(bg, &fake{ok: true}, clock); err != nil {
			t.Fatalf("no wait: %v", err)
		}
		f := &fake{w: 5e6, ok: true}
		if err := run(bg, f, clock); err != nil || clock() != 5e6 || f.cancelled != nil {
			t.Fatalf("wait: %v at %d, cancelled %v", err, clock(), f.cancelled)
		}
		ctx, stop := context.WithTimeout(bg, time.Millisecond)
		f = &fake{w: 5e6, ok: true}
		if err := run(ctx, f, clock); err != errDeadline || clock() != 5e6 || len(f.cancelled) != 1 || f.cancelled[0] != 5e6 {
			t.Fatalf("deadline: %v at %d, cancelled %v", err, clock(), f.cancelled)
		}
		stop()
		ctx, cancel := context.WithCancel(bg)
		time.AfterFunc(2*time.Millisecond, cancel)
		f = &fake{w: 5e6, ok: true}
		if err := run(ctx, f, clock); err != context.Canceled || clock() != 7e6 || len(f.cancelled) != 1 || f.cancelled[0] != 7e6 {
			t.Fatalf("cancel: %v at %d, cancelled %v", err, clock(), f.cancelled)
		}
		if err := run(ctx, &fake{ok: true}, clock); err != context.Canceled {
			t.Fatalf("done ctx: %v", err)
		}
	})
}

// TestNoAllocs: closures over a caller's locals stay on its stack.
func TestNoAllocs(t *testing.T) {
	bg := context.Background()
	now := int64(0)
	if a := testing.AllocsPerRun(1000, func() {
		var got int64
		_ = For(bg, func() int64 { now++; return now }, func(n int64) (int64, bool, error) {
			got = n
			return 0, true, nil
		}, func(n int64) { got = -n }, errRefused, errDeadline)
		_ = got
	}); a != 0 {
		t.Fatalf("%v allocs per run", a)
	}
}
