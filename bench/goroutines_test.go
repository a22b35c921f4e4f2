package bench

import (
	"slices"
	"testing"
)

func TestGoroutineCounts(t *testing.T) {
	for _, c := range []struct {
		procs int
		want  []int
	}{
		{-1, []int{1, 8}},
		{0, []int{1, 8}},
		{1, []int{1, 8}}, // was [1 1 8]: two benchmarks named g=1, the second g=1#01
		{2, []int{1, 2, 16}},
		{3, []int{1, 3, 24}},
		{64, []int{1, 64, 512}},
	} {
		got := GoroutineCounts(c.procs)
		if !slices.Equal(got, c.want) {
			t.Errorf("GoroutineCounts(%d) = %v, want %v", c.procs, got, c.want)
		}
	}
	for procs := 1; procs <= 256; procs++ {
		gs := GoroutineCounts(procs)
		if !slices.IsSorted(gs) || len(slices.Compact(slices.Clone(gs))) != len(gs) {
			t.Fatalf("GoroutineCounts(%d) = %v: not ascending or has repeats", procs, gs)
		}
		if gs[0] != 1 {
			t.Fatalf("GoroutineCounts(%d) = %v: does not start with the plain loop", procs, gs)
		}
		for _, g := range gs[1:] {
			if p := Parallelism(g, procs); p*procs != g {
				t.Fatalf("GOMAXPROCS %d: Parallelism(%d) = %d runs %d goroutines", procs, g, p, p*procs)
			}
		}
	}
}
