package stress

import (
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/cellrate/cellrate/limit"
)

// subjects lists the cellrate limiters under test, with their bounds.
var subjects []Subject

// drives are the shapes of every limiter run, d long in all: a crowd
// deciding together at each instant, and one goroutine making one decision
// per instant, each on a clock that goes backwards now and then and on one
// that does not; a crowd each reading a shared clock and deciding at the
// stale time it read; and a crowd deciding at the edges of the subject's
// windows, many of its times stale by a few ns to a few windows.
func drives(t *testing.T, d time.Duration) map[string]Drive {
	s := seed(t)
	all := map[string]Drive{
		"crowd":               {Goroutines: crowd(), PhaseOps: 4, Seed: s},
		"crowd-monotone":      {Goroutines: crowd(), PhaseOps: 4, Seed: s, Monotone: true},
		"sequential":          {Goroutines: 1, PhaseOps: 1, Seed: s},
		"sequential-monotone": {Goroutines: 1, PhaseOps: 1, Seed: s, Monotone: true},
		"free":                {Goroutines: crowd(), Seed: s, Free: true},
		"boundary-stale":      {Goroutines: crowd(), Seed: s, Boundary: true},
	}
	for name, dr := range all {
		dr.Duration = d / time.Duration(len(all))
		all[name] = dr
	}
	return all
}

func driveAll(t *testing.T, d time.Duration, s Subject) {
	for name, d := range drives(t, d) {
		t.Run(name, func(t *testing.T) {
			rep, err := d.Run(s)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d phases, %d decisions: admitted %d of an exact bound of %s units; %d conservative denials",
				rep.Phases, rep.Decisions, rep.Admitted, rep.Bound.FloatString(1), rep.Missed)
		})
	}
}

func TestLimiters(t *testing.T) {
	if len(subjects) == 0 {
		t.Skip("no limiters registered")
	}
	for _, s := range subjects {
		t.Run(s.Name, func(t *testing.T) { driveAll(t, runFor(t), s) })
	}
}

// testSubject wraps a testBucket built by newLim as a Subject.
func testSubject(name string, b testBucket, newLim func(testBucket) limit.Limiter) Subject {
	return Subject{Name: name, New: func() limit.Limiter { return newLim(b) }, MaxN: b.burst, Burst: b.burst, Rate: RatePer(1, time.Duration(b.period))}
}

var testBuckets = map[string]testBucket{
	"burst1-1ns":    {burst: 1, period: 1},
	"burst1000-1ms": {burst: 1000, period: int64(time.Millisecond)},
	"burst7-3s":     {burst: 7, period: 3 * int64(time.Second)},
}

// TestDriveExactBucket shows the limiter runs accept a correct limiter,
// and find no denial of a cost it held.
func TestDriveExactBucket(t *testing.T) {
	for name, b := range testBuckets {
		t.Run(name, func(t *testing.T) {
			driveAll(t, proofFor(t), testSubject(name, b, newLocked))
			d := Drive{Goroutines: 1, PhaseOps: 1, Duration: proofFor(t) / 2, Seed: seed(t), Monotone: true}
			rep, err := d.Run(testSubject(name, b, newLocked))
			if err != nil || rep.Missed != 0 {
				t.Fatalf("%d denials of a cost the bucket held, error %v", rep.Missed, err)
			}
		})
	}
}

// TestDriveCatchesBrokenLimiters shows the limiter runs reject a cell that
// loses updates, a step that credits time twice when the clock goes
// backwards, and a window that counts a stale time in its current window
// (caught by the boundary drive; the random clocks rarely pile stale times
// on one instant across many windows).
func TestDriveCatchesBrokenLimiters(t *testing.T) {
	d := proofFor(t)
	s := seed(t)
	cases := []struct {
		name  string
		drive Drive
		subj  Subject
	}{
		{"racy-cell", Drive{Goroutines: crowd(), PhaseOps: 4, Duration: d, Seed: s},
			testSubject("racy", testBucket{burst: 5, period: int64(time.Second)}, newRacy)},
		{"rebase-on-backwards-clock", Drive{Goroutines: 1, PhaseOps: 1, Duration: d, Seed: s},
			testSubject("rebase", testBucket{burst: 5, period: int64(time.Second), rebase: true}, newLocked)},
		{"stale-time-in-current-window", Drive{Goroutines: crowd(), Duration: d, Seed: s, Boundary: true},
			staleWindowSubject(7, 3*time.Second)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mustCatch(t, func(n int) (bool, error) {
				c.drive.Seed = s + uint64(n-1)
				_, err := c.drive.Run(c.subj)
				return err != nil && strings.Contains(err.Error(), "over-admission"), err
			})
		})
	}
}

// TestLimiterModelCatchesRacyCell checks the porcupine model of a limiter
// both ways: the locked bucket is linearizable, the racy one is not.
func TestLimiterModelCatchesRacyCell(t *testing.T) {
	b := testBucket{burst: 3, period: 10}
	model := LimiterModel(b.init(), b.anyStep)
	s := seed(t)
	rounds, h, err := LimiterLinearizable(func() limit.Limiter { return newLocked(b) }, model, proofFor(t), 4, 12, 40, 3, s)
	if err != nil {
		t.Fatalf("locked bucket: %v\n%s", err, Describe(model, h))
	}
	t.Logf("locked bucket: %d histories, all linearizable", rounds)
	rounds, h, err = LimiterLinearizable(func() limit.Limiter { return newRacy(b) }, model, 2*time.Second, 4, 12, 40, 3, s)
	if err == nil {
		t.Fatal("racy bucket passed")
	}
	t.Logf("racy bucket caught after %d rounds: %v\n%s", rounds, err, Describe(model, h))
}

// TestLimitersLinearizable checks concurrent histories of each limiter
// against its own step function.
func TestLimitersLinearizable(t *testing.T) {
	for _, s := range subjects {
		if s.Step == nil {
			continue
		}
		t.Run(s.Name, func(t *testing.T) {
			model := LimiterModel(s.Init, s.Step)
			rounds, h, err := LimiterLinearizable(s.New, model, runFor(t), 4, 12, 40, min(s.MaxN, 3), seed(t))
			if err != nil {
				t.Fatalf("%v\n%s", err, Describe(model, h))
			}
			t.Logf("%d histories, all linearizable", rounds)
		})
	}
}

// TestGivenTimesBound checks the interval check on hand-made phases,
// out of order as concurrent callers deliver them.
func TestGivenTimesBound(t *testing.T) {
	s := Subject{Name: "b5-r1", Burst: 5, Rate: big.NewRat(1, 1)}
	ok := []phase{{now: 10, admitted: 5}, {now: 0, admitted: 5}, {now: 5, admitted: 0}}
	if err := givenTimesBound(s, ok); err != nil {
		t.Errorf("within the bound: %v", err)
	}
	over := []phase{{now: 10, admitted: 5}, {now: 9, admitted: 2}, {now: 0, admitted: 5}}
	if err := givenTimesBound(s, over); err == nil {
		t.Error("7 units in [9, 10] with burst 5 and rate 1 passed")
	}
}

// TestClockStaysInRange: however long a run, the injected clock stays in
// [0, 2^62], so spans between its times never overflow.
func TestClockStaysInRange(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, monotone := range []bool{false, true} {
		c := clock{now: 0, token: 1e15, fill: 1e15, monotone: monotone}
		prev := c.now
		for range 1_000_000 {
			c.step(r)
			if c.now < 0 || c.now > maxTime || (monotone && c.now < prev) {
				t.Fatalf("monotone=%v: clock at %d after %d", monotone, c.now, prev)
			}
			prev = c.now
		}
	}
}
