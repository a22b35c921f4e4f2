package atomic128

import (
	"testing"

	"github.com/cellrate/cellrate/internal/path128"
)

// forEachPath runs f once per path this build and CPU supports, with that
// path forced, and restores the start-up path afterwards.
func forEachPath(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	for _, p := range path128.Supported() {
		t.Run(p.String(), func(t *testing.T) {
			usePath(t, p)
			f(t)
		})
	}
}

// usePath forces p for the rest of the test.
func usePath(tb testing.TB, p path128.Path) {
	tb.Helper()
	saved := path128.Active
	if err := path128.Force(p); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { path128.Active = saved })
}
