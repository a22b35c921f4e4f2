// Package pairtest holds test inputs shared by the tests of the 128-bit
// atomics (asm, atomic128, and the stress module).
package pairtest

import "math/rand/v2"

// Edges are the uint64 values where carries, sign bits and 32-bit halves
// change.
var Edges = []uint64{0, 1, 2, 1<<32 - 1, 1 << 32, 1<<63 - 1, 1 << 63, 1<<64 - 2, 1<<64 - 1}

// Value draws from Edges half the time, so that compares of random pairs
// hit, and uniformly otherwise.
func Value(r *rand.Rand) uint64 {
	if r.IntN(2) == 0 {
		return Edges[r.IntN(len(Edges))]
	}
	return r.Uint64()
}
