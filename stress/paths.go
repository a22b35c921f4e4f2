package stress

import "github.com/cellrate/cellrate/atomic128"

// A Path is one implementation of atomic128 that this machine runs.
type Path struct {
	Name string
	// Use makes atomic128 run this path until restore is called.
	Use func() (restore func())
}

// Paths lists every atomic128 path this CPU supports.
func Paths() []Path {
	return []Path{{Name: atomic128.Path(), Use: func() func() { return func() {} }}}
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

// BrokenCells returns n Broken cells.
func BrokenCells(n int) []Pair {
	backing := make([]Broken, n)
	cells := make([]Pair, n)
	for i := range backing {
		cells[i] = &backing[i]
	}
	return cells
}
