package debounce

import (
	"testing"

	"github.com/cellrate/cellrate/internal/limittest"
)

// TestZeroDebouncer: the zero Debouncer does nothing: no method panics,
// Flush and Stop report false, and no state is written.
func TestZeroDebouncer(t *testing.T) {
	var d Debouncer
	for _, now := range limittest.ZeroTimes {
		d.CallAt(now)
	}
	d.Call()
	if d.Flush() || d.Stop() || d.Flush() {
		t.Fatal("Flush or Stop on the zero Debouncer reported true")
	}
	if d.st.Load() != 0 || d.last.Load() != 0 || d.first.Load() != 0 {
		t.Fatalf("the zero Debouncer was written: state %#x, last %d", d.st.Load(), d.last.Load())
	}
}
