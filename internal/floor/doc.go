// Package floor holds the benchmark floors of the 128-bit atomics: the bare
// instruction sequences of package asm's load routines, without their
// results, which atomic128's benchmarks measure the typed operations
// against (BenchmarkRatio). They are not for use: nothing but benchmarks
// and their tests imports this package.
//
// Builds without the assembly (purego, other architectures) have no floors.
package floor

//go:generate go -C ../../gen run . -pkg internal/floor
