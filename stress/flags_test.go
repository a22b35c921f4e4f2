package stress

import (
	"flag"
	"os"
	"runtime"
	"testing"
	"time"
)

var (
	durFlag    = flag.Duration("stress.dur", 0, "run length of each stress run (default: $STRESS_DUR, else 2s, or 250ms with -short)")
	brokenFlag = flag.String("stress.broken", "", `run the atomic128 runs on a deliberately broken cell, "torn" or "cas": they must fail`)
	seedFlag   = flag.Uint64("stress.seed", 0, "random seed (0: from the clock, logged)")
)

// runFor is the length of one stress run.
func runFor(t testing.TB) time.Duration {
	if *durFlag > 0 {
		return *durFlag
	}
	if s := os.Getenv("STRESS_DUR"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("STRESS_DUR: %v", err)
		}
		return d
	}
	if testing.Short() {
		return 250 * time.Millisecond
	}
	return 2 * time.Second
}

// proofFor is the length of the runs that prove the checks themselves
// (that they pass a correct model and fail a broken one): they do not grow
// with -stress.dur.
// catchBudget bounds the time a deliberately broken subject gets to be
// caught in, in fresh runs (at least three), each of which catches it by
// chance within its time. A time rather than a count of runs: a loaded or
// slower machine sees fewer interleavings in each run, so it gets more.
const catchBudget = 30 * time.Second

// mustCatch runs run(1), run(2), ... until one returns a catch or
// catchBudget has passed after the third, and fails t if none did; miss
// is the last run's outcome when it was not a catch.
func mustCatch(t *testing.T, run func(n int) (caught bool, outcome error)) {
	t.Helper()
	start := time.Now()
	var last error
	n := 1
	for ; n <= 3 || time.Since(start) < catchBudget; n++ {
		caught, outcome := run(n)
		if caught {
			t.Logf("caught on run %d: %v", n, outcome)
			return
		}
		last = outcome
	}
	t.Fatalf("not caught in %d runs (%v): %v", n-1, time.Since(start).Round(time.Millisecond), last)
}

func proofFor(t testing.TB) time.Duration { return min(runFor(t), time.Second) }

// seed returns the run's seed and logs it, so a failure can be replayed
// with -stress.seed.
func seed(t testing.TB) uint64 {
	s := *seedFlag
	if s == 0 {
		s = uint64(time.Now().UnixNano())
	}
	t.Logf("-stress.seed=%d", s)
	return s
}

// crowd is the number of goroutines of an invariant run: many more than
// there are Ps, so that goroutines are preempted inside their operations.
func crowd() int { return 32 * runtime.GOMAXPROCS(0) }
