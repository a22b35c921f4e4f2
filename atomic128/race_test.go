//go:build race

package atomic128

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/cellrate/cellrate/internal/path128"
)

// raceChildEnv selects the scenario TestRaceChild runs in a child process.
const raceChildEnv = "CELLRATE_RACE_CHILD"

// TestRaceChild is the child side of the tests below; it does nothing unless
// started by them. Each scenario contains a real data race (on data the
// cell's operations do not order) that the detector must report.
func TestRaceChild(t *testing.T) {
	switch os.Getenv(raceChildEnv) {
	case "":
		t.Skip("run by TestRaceReported")
	case "unannotated":
		// Without the annotations, publishing through the assembly is
		// invisible to the detector: the read of data is reported.
		raceUnannotated = true
		publish(new(Uint64Pair), writers["Store"], observers["Load"])
	case "other-cell":
		// Publication through one cell does not order accesses observed
		// through another. On the fallback, cells sharing a seqlock stripe
		// would order them through it: take cells on different stripes.
		x, y := new(Uint64Pair), new(Uint64Pair)
		for seqFor(x.addr()) == seqFor(y.addr()) {
			y = new(Uint64Pair)
		}
		var data int
		done := make(chan struct{})
		go func() {
			data = 1
			x.Store(1, 1)
			close(done)
		}()
		time.Sleep(50 * time.Millisecond) // sleeping orders nothing
		y.Load()
		_ = data
		<-done
	case "read-before-load":
		// Reading data before the Load that observes its publication is
		// still a race.
		var x Uint64Pair
		var data, seen int
		done := make(chan struct{})
		go func() {
			data = 1
			x.Store(1, 1)
			close(done)
		}()
		time.Sleep(50 * time.Millisecond)
		seen = data
		for a, _ := x.Load(); a != 1; a, _ = x.Load() {
		}
		_ = seen
		<-done
	}
}

// TestRaceReported runs each TestRaceChild scenario, on each path, in a
// child process and requires the detector's report. It fails if the
// annotations were too broad (hiding races on other data) or if the
// unannotated assembly were somehow seen by the detector (making the
// annotations untested).
func TestRaceReported(t *testing.T) {
	if os.Getenv(raceChildEnv) != "" {
		t.Skip("in a child")
	}
	for _, p := range path128.Supported() {
		for _, scenario := range []string{"unannotated", "other-cell", "read-before-load"} {
			if scenario == "unannotated" && p == path128.Fallback {
				// The fallback is Go code with atomics: the detector sees
				// its synchronization without annotations.
				continue
			}
			t.Run(p.String()+"/"+scenario, func(t *testing.T) {
				cmd := exec.Command(os.Args[0], "-test.run=^TestRaceChild$", "-test.count=1")
				cmd.Env = append(os.Environ(), raceChildEnv+"="+scenario, path128.EnvVar+"="+p.String())
				out, err := cmd.CombinedOutput()
				if err == nil || !strings.Contains(string(out), "WARNING: DATA RACE") {
					t.Fatalf("child %s on %s: err %v, want a DATA RACE report; output:\n%s", scenario, p, err, out)
				}
			})
		}
	}
}
