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
// catchTries bounds the runs a deliberately broken subject gets to be
// caught in: each run catches it by chance within its time.
const catchTries = 3

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
