package atomic128

import (
	"testing"

	"github.com/cellrate/cellrate/internal/path128"
)

// TestPathNames: Path names the path that runs, and LockFree is false on
// the fallback only, on every path this build and CPU support.
func TestPathNames(t *testing.T) {
	for _, p := range path128.Supported() {
		t.Run(p.String(), func(t *testing.T) {
			usePath(t, p)
			if got := Path(); got != p.String() {
				t.Errorf("Path() = %q with %q forced", got, p.String())
			}
			if got, want := LockFree(), p != path128.Fallback; got != want {
				t.Errorf("LockFree() = %v on path %q, want %v", got, p.String(), want)
			}
		})
	}
}
