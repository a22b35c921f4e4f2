package httplimit

import (
	"os/exec"
	"strings"
	"testing"
)

// TestVetReportsCopies runs go vet on testdata/copies, which copies a
// Limiter by value and by assignment, and requires both reports, naming
// the Limiter.
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
	for _, want := range []string{"byValue passes lock by value: github.com/cellrate/cellrate/httplimit.Limiter", "assignment copies lock value to m: github.com/cellrate/cellrate/httplimit.Limiter"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("go vet output lacks %q:\n%s", want, out)
		}
	}
}
