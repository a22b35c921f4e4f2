package redis

import (
	"os/exec"
	"strings"
	"testing"
)

// TestVetReportsCopies: go vet's copylocks check reports a copy of each
// stateful type, naming it first, as their docs say.
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
	for _, typ := range []string{"Limiter", "TwoTier"} {
		want := ": github.com/cellrate/cellrate/redis." + typ + " contains "
		if !strings.Contains(string(out), want) {
			t.Errorf("go vet does not report a copy of redis.%s:\n%s", typ, out)
		}
	}
}
