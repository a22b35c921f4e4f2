package surfacetest

import (
	"go/ast"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// stateful are the types testdata/copies copies: each must be reported by
// go vet's copylocks check under its own name, the first type in the
// report, and with no internal type in the report (which a user could not
// look up).
var stateful = []string{
	"gcra.Limiter", "bucket.Limiter", "window.Limiter", "slidelog.Limiter",
	"packed64.Bucket", "packed64.Window", "packed64.Buckets", "packed64.Windows",
	"striped.Limiter", "striped.Counter", "rate.Limiter", "pacer.Pacer",
	"adaptive.Throttle", "adaptive.AIMD", "debounce.Debouncer", "coalesce.Group[string, int]",
	"keyed.Table", "httplimit.Limiter", "concurrency.Limiter", "rate.Reservation", "rate.Sometimes",
	"step.HighWater", "nanotime.Coarse", "atomic128.Uint64Pair",
}

// values are the exported struct types meant to be copied: parameters,
// states, results and handles whose copies are documented (a Reservation
// or Token copied is the same reservation or hold).
var values = []string{
	"gcra.Reservation", "bucket.Reservation", "pacer.Reservation", "concurrency.Token",
	"window.Params", "window.State", "slidelog.Params",
	"step.Bucket", "step.BucketState", "step.GCRA", "step.PackedBucket", "step.PackedBucketState",
	"step.PackedWindow", "step.PackedWindowState",
	"keyed.Stats", "httplimit.Decision", "httplimit/clientkey.Key", "httplimit.Limit", "httplimit.Policy",
	"httplimit.Stats", "coalesce.PanicError", "limit.All", "limit.ParamError", "limit.Receipt",
	"limit.Result",
}

// TestEveryStructClassified: each exported struct type of the main
// module's user packages is either stateful (and then in testdata/copies,
// for go vet to report its copies) or a value meant to be copied, so a new
// stateful type cannot be added without its copy check.
func TestEveryStructClassified(t *testing.T) {
	if _, err := os.Stat(filepath.Join("..", "..", "go.mod")); err != nil {
		t.Skip("the module's source is not here (a test binary copied to a cross target's VM)")
	}
	known := map[string]int{}
	for _, typ := range stateful {
		name, _, _ := strings.Cut(typ, "[")
		known[name]++
	}
	for _, typ := range values {
		known[typ]++
	}
	for _, dir := range userPackages {
		if dir == "redis" {
			continue // its own module: redis/'s TestVetReportsCopies
		}
		p, _ := docOf(t, filepath.Join("..", "..", dir))
		for _, typ := range p.Types {
			ts := typ.Decl.Specs[0].(*ast.TypeSpec)
			if _, ok := ts.Type.(*ast.StructType); !ok {
				continue
			}
			name := dir + "." + typ.Name
			switch known[name] {
			case 0:
				t.Errorf("%s is neither in stateful (with a copy in testdata/copies) nor in values", name)
			case 2:
				t.Errorf("%s is in both stateful and values", name)
			}
		}
	}
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
				if strings.Contains(line, "/internal/") {
					t.Errorf("go vet's report of a copy of %s names an internal type:\n%s", typ, line)
				}
			}
		}
		if !found {
			t.Errorf("go vet does not report a copy of %s:\n%s", typ, out)
		}
	}
}
