package surfacetest

import (
	"os/exec"
	"strings"
	"testing"
)

// stateful are the types testdata/copies copies: each must be reported by
// go vet's copylocks check under its own name, the first type in the
// report, whatever it contains.
var stateful = []string{
	"gcra.Limiter", "bucket.Limiter", "window.Limiter", "slidelog.Limiter",
	"packed64.Bucket", "packed64.Window", "packed64.Buckets", "packed64.Windows",
	"striped.Limiter", "striped.Counter", "rate.Limiter", "pacer.Pacer",
	"adaptive.Throttle", "adaptive.AIMD", "debounce.Debouncer", "coalesce.Group[string, int]",
	"keyed.Table", "httplimit.Limiter", "concurrency.Limiter",
}

// TestVetReportsCopies runs go vet on testdata/copies and requires a
// copylocks report naming each type in stateful.
func TestVetReportsCopies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go vet")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	out, err := exec.Command(goCmd, "vet", "./testdata/copies").CombinedOutput()
	if err == nil {
		t.Fatalf("go vet found nothing in testdata/copies:\n%s", out)
	}
	for _, typ := range stateful {
		want := ": github.com/cellrate/cellrate/" + typ + " contains "
		found := false
		for _, line := range strings.Split(string(out), "\n") {
			if strings.Contains(line, "copies lock value") && strings.Contains(line, want) {
				found = true
			}
		}
		if !found {
			t.Errorf("go vet does not report a copy of %s:\n%s", typ, out)
		}
	}
}
