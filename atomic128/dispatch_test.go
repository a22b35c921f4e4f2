package atomic128

import (
	"testing"

	"github.com/cellrate/cellrate/internal/limittest"
	"github.com/cellrate/cellrate/internal/path128"
)

// The paths compute the same results, so the tests that compare results
// cannot tell which one ran. These two can: they fail if the dispatch (a
// compare of path128.Active with constants in assembly) sends an operation
// to another path's routine.

// TestDispatchWriters: the fallback's writers move the pair's seqlock
// stripe, the hardware paths' writers never touch it.
func TestDispatchWriters(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		x := new(Uint64Pair)
		seq := seqFor(x.addr())
		for _, w := range []struct {
			name string
			op   func()
		}{
			{"Store", func() { x.Store(1, 2) }},
			{"Swap", func() { x.Swap(3, 4) }},
			{"CompareAndSwap", func() { x.CompareAndSwap(3, 4, 5, 6) }},
		} {
			before := seq.Load()
			w.op()
			if moved, fallback := seq.Load() != before, path128.Active == path128.Fallback; moved != fallback {
				t.Errorf("%s on path %s: seqlock moved %v, want %v", w.name, Path(), moved, fallback)
			}
		}
	})
}

// TestDispatchLoad: on a read-only page, Load faults exactly on the paths
// that load by a read-modify-write (cx16, casp, llsc), not on cx16-vmovdqa
// (one VMOVDQA) or the fallback (plain loads under a seqlock).
func TestDispatchLoad(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		x := limittest.ReadOnly(t, new(Uint64Pair))
		writes := map[path128.Path]bool{path128.CX16: true, path128.CASP: true, path128.LLSC: true}[path128.Active]
		if got := limittest.Faults(func() { x.Load() }); got != writes {
			t.Errorf("Load on a read-only page on path %s: fault %v, want %v", Path(), got, writes)
		}
	})
}
