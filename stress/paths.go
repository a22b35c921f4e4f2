package stress

import (
	"github.com/cellrate/cellrate/atomic128"
	"github.com/cellrate/cellrate/internal/path128"
)

// A Path is one implementation of atomic128 that this machine runs.
type Path struct {
	Name string
	// Use makes atomic128 run this path until restore is called. Call it
	// only while no atomic128 operation is running.
	Use func() (restore func())
}

// Paths lists every atomic128 path this build and CPU support, best first.
func Paths() []Path {
	var paths []Path
	for _, p := range path128.Supported() {
		paths = append(paths, Path{Name: p.String(), Use: func() func() {
			prev := path128.Active
			if err := path128.Force(p); err != nil {
				panic(err) // Supported listed it
			}
			return func() { path128.Active = prev }
		}})
	}
	return paths
}

// Cells returns n adjacent atomic128 cells: Uint64Pair is 24 bytes, so
// neighbours alternate between the two alignments of the pair inside it.
func Cells(n int) []Pair {
	backing := make([]atomic128.Uint64Pair, n)
	cells := make([]Pair, n)
	for i := range backing {
		cells[i] = &backing[i]
	}
	return cells
}

// BrokenCells returns n cells of a deliberately wrong kind: "torn"
// (Broken) or "cas" (BrokenCAS).
func BrokenCells(kind string, n int) []Pair {
	cells := make([]Pair, n)
	for i := range cells {
		switch kind {
		case "torn":
			cells[i] = new(Broken)
		case "cas":
			cells[i] = new(BrokenCAS)
		default:
			panic("stress: no broken cell " + kind)
		}
	}
	return cells
}
