// Package asm is the raw-instruction layer under atomic128, and not for
// direct use: use atomic128.Uint64Pair, which chooses a routine the CPU
// supports, aligns the pair, falls back to locks where there are no 128-bit
// instructions, and tells the race detector what the routines do.
//
// It holds one function per instruction sequence, with no CPU-feature checks,
// no alignment handling and no race-detector annotations, and exports
// exactly what atomic128 runs. A routine whose instruction the CPU lacks
// faults (SIGILL), and so does a pointer that is not 16-byte aligned
// (SIGSEGV on amd64, SIGBUS on arm64).
//
// The pair p[0], p[1] is one 128-bit value; p[0] is its low half in memory
// order on both little-endian architectures this package supports.
//
// Ordering contract: every routine is sequentially consistent, as the
// operations of sync/atomic are. All routines that touch the same pair are
// totally ordered, and that order is consistent with each goroutine's program
// order and with sync/atomic operations on other memory. Each routine's
// comment gives its Go signature, pseudo-code of its single atomic effect and
// the instructions that provide the ordering.
//
// The assembly is built under `gc && !purego` on amd64 (asm_amd64.s, written
// by the avo program in ../gen) and arm64 (asm_arm64.s, hand-written: avo
// emits amd64 only). gen writes both declaration files, and the comments of
// both .s files, from one table (gen/spec.go): `go generate ./...` (make
// generate). The pure-Go reference functions (reference.go) exist everywhere:
// they state each operation's meaning without atomicity, the tests compare
// the assembly against them, and atomic128's fallback runs them under its
// locks.
package asm

//go:generate go -C ../gen run . -pkg asm
