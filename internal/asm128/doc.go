// Package asm128 holds the raw 128-bit instructions under atomic128: one
// function per instruction sequence, with no CPU-feature checks, no
// alignment handling and no race-detector annotations. A routine whose
// instruction the CPU lacks faults (SIGILL), and so does a pointer that is
// not 16-byte aligned (SIGSEGV on amd64, SIGBUS on arm64): that is why it is
// internal, and atomic128, which checks both, is the only caller.
//
// The pair p[0], p[1] is one 128-bit value; p[0] is its low half in memory
// order on both little-endian architectures this package supports. Every
// routine is sequentially consistent, as the operations of sync/atomic are;
// each routine's comment gives its Go signature, pseudo-code of its single
// atomic effect (package asm's reference functions state the same in Go)
// and the instructions that provide the ordering.
//
// The assembly is built under `gc && !purego` on amd64 (asm128_amd64.s,
// written by the avo program in gen/) and arm64 (asm128_arm64.s,
// hand-written: avo emits amd64 only). gen writes both declaration files,
// and the comments of both .s files, from one table (gen/spec.go):
// `go generate ./...` (make generate).
package asm128

//go:generate go -C ../../gen run . -pkg internal/asm128
