package debounce

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestNilPanicHandlerCrashes: WithPanicHandler(nil) keeps the default, so
// a panic of fn in the timer's goroutine crashes the program (run here in
// a child process), as it does with no handler.
func TestNilPanicHandlerCrashes(t *testing.T) {
	if os.Getenv("DEBOUNCE_CRASH_CHILD") == "1" {
		d, err := New(time.Millisecond, func() { panic("fn panicked in the timer") }, WithPanicHandler(nil))
		if err != nil {
			t.Fatal(err)
		}
		d.Call()
		time.Sleep(10 * time.Second) // the timer's panic ends the process first
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestNilPanicHandlerCrashes$", "-test.count=1")
	cmd.Env = append(os.Environ(), "DEBOUNCE_CRASH_CHILD=1")
	out, err := cmd.CombinedOutput()
	if pe := (*os.PathError)(nil); errors.As(err, &pe) {
		t.Skipf("the child cannot run here (an emulated binary that cannot start another): %v", err)
	}
	if err == nil || !strings.Contains(string(out), "fn panicked in the timer") {
		t.Fatalf("the child did not crash with fn's panic: %v\n%s", err, out)
	}
}
