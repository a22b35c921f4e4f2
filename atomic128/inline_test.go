package atomic128

import (
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// TestMethodsInline builds the package, with its assembly, under the
// compiler's inlining report and requires that the four methods inline (a
// limiter's hot path is then a compare and the instructions): it fails when
// a change makes one too costly for the inliner's budget.
func TestMethodsInline(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build")
	}
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		t.Skip("no assembly on " + runtime.GOARCH)
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	out, err := exec.Command(goCmd, "build", "-gcflags=-m", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build -gcflags=-m: %v\n%s", err, out)
	}
	for _, m := range []string{"Load", "Store", "Swap", "CompareAndSwap"} {
		if !strings.Contains(string(out), "can inline (*Uint64Pair)."+m+"\n") {
			t.Errorf("(*Uint64Pair).%s does not inline:\n%s", m, out)
		}
	}
}
