package step_test

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cellrate/cellrate/bucket"
	"github.com/cellrate/cellrate/gcra"
	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/packed64"
	"github.com/cellrate/cellrate/step"
)

// decider is one limiter's AllowNAt.
type decider func(now, n int64) (limit.Result, error)

// sameAs runs one random schedule (stale times, costs past the burst)
// through a step on a plain state and through the limiter of its package:
// every decision is the same.
func sameAs(t *testing.T, name string, burst int64, stepped, limiter decider) {
	t.Helper()
	rng := rand.New(rand.NewPCG(uint64(burst), 7))
	now := int64(1 << 40)
	for i := range 2000 {
		now += rng.Int64N(int64(50*time.Millisecond)) - int64(5*time.Millisecond)
		n := rng.Int64N(burst + 2)
		want, werr := limiter(now, n)
		got, err := stepped(now, n)
		if got != want || !errors.Is(err, werr) {
			t.Fatalf("%s op %d at %d n=%d: step %+v %v, limiter %+v %v", name, i, now, n, got, err, want, werr)
		}
	}
}

// TestStepsDecideAsTheLimiters: each step is its package's limiter's
// decision.
func TestStepsDecideAsTheLimiters(t *testing.T) {
	const events, period, burst = 7, time.Second, 5
	g, _ := step.NewGCRA(events, period, burst)
	gl, _ := gcra.New(events, period, burst)
	var gs step.GCRAState
	sameAs(t, "GCRA", burst, func(now, n int64) (limit.Result, error) {
		next, r, err := g.Step(gs, now, n)
		gs = next
		return r, err
	}, gl.AllowNAt)

	b, _ := step.NewBucket(events, period, burst)
	bl, _ := bucket.New(events, period, burst)
	var bs step.BucketState
	sameAs(t, "Bucket", burst, func(now, n int64) (limit.Result, error) {
		next, r, err := b.Step(bs, now, n)
		bs = next
		return r, err
	}, bl.AllowNAt)

	pb, _ := step.NewPackedBucket(events, period, burst)
	pbl, _ := packed64.NewBucket(events, period, burst)
	var pbs step.PackedBucketState
	sameAs(t, "PackedBucket", burst, func(now, n int64) (limit.Result, error) {
		next, r, err := pb.Step(pbs, now, n)
		pbs = next
		return r, err
	}, pbl.AllowNAt)

	pw, _ := step.NewPackedWindow(burst, period)
	pwl, _ := packed64.NewWindow(burst, period)
	var pws step.PackedWindowState
	sameAs(t, "PackedWindow", burst, func(now, n int64) (limit.Result, error) {
		next, r, err := pw.Step(pws, now, n)
		pws = next
		return r, err
	}, pwl.AllowNAt)
}

// TestStepOneIsStep: GCRA.StepOne decides as Step(s, now, 1).
func TestStepOneIsStep(t *testing.T) {
	g, _ := step.NewGCRA(3, time.Second, 2)
	rng := rand.New(rand.NewPCG(1, 2))
	var s step.GCRAState
	now := int64(1 << 40)
	for i := range 2000 {
		now += rng.Int64N(int64(time.Second)) - int64(100*time.Millisecond)
		want, r, _ := g.Step(s, now, 1)
		got, ok := g.StepOne(s, now)
		if ok != r.OK || got != want {
			t.Fatalf("op %d: StepOne %d %v, Step %d %+v", i, got, ok, want, r)
		}
		s = got
	}
}

// TestZeroParamsAdmitNothing: the zero value of each kind refuses every
// cost above 0.
func TestZeroParamsAdmitNothing(t *testing.T) {
	var (
		g  step.GCRA
		b  step.Bucket
		pb step.PackedBucket
		pw step.PackedWindow
	)
	if _, r, err := g.Step(0, 0, 1); r.OK || err != limit.ErrCostExceedsBurst {
		t.Errorf("GCRA: %+v %v", r, err)
	}
	if _, ok := g.StepOne(0, 0); ok {
		t.Error("GCRA.StepOne admitted")
	}
	if _, r, err := b.Step(step.BucketState{}, 0, 1); r.OK || err != limit.ErrCostExceedsBurst {
		t.Errorf("Bucket: %+v %v", r, err)
	}
	if _, n := b.TakeUpTo(step.BucketState{}, 0, 1); n != 0 {
		t.Errorf("Bucket.TakeUpTo took %d", n)
	}
	if _, r, err := pb.Step(step.PackedBucketState{}, 0, 1); r.OK || err != limit.ErrCostExceedsBurst {
		t.Errorf("PackedBucket: %+v %v", r, err)
	}
	if _, r, err := pw.Step(step.PackedWindowState{}, 0, 1); r.OK || err != limit.ErrCostExceedsBurst {
		t.Errorf("PackedWindow: %+v %v", r, err)
	}
}

// TestLimits: the Max constants are what the constructors take, and one
// more is a *limit.ParamError of this package naming the parameter.
func TestLimits(t *testing.T) {
	if _, err := step.NewPackedBucket(1, time.Hour, step.MaxPackedBurst); err != nil {
		t.Error(err)
	}
	if _, err := step.NewPackedWindow(step.MaxPackedWindowLimit, step.MaxPackedWindow); err != nil {
		t.Error(err)
	}
	for param, err := range map[string]error{
		"burst":  second(step.NewPackedBucket(1, time.Hour, step.MaxPackedBurst+1)),
		"limit":  second(step.NewPackedWindow(step.MaxPackedWindowLimit+1, time.Second)),
		"window": second(step.NewPackedWindow(1, step.MaxPackedWindow+1)),
		"events": second(step.NewGCRA(0, time.Second, 1)),
		"period": second(step.NewBucket(1, 0, 1)),
	} {
		var pe *limit.ParamError
		if !errors.As(err, &pe) || pe.Param != param || pe.Pkg != "step" {
			t.Errorf("%s: %v", param, err)
		}
	}
}

func second[T any](_ T, err error) error { return err }
