// Package asm states what each 128-bit atomic instruction sequence under
// atomic128 does, as plain Go: RefCas, RefLoad, RefStore and RefSwap are the
// meaning of every compare-and-swap, load, store and swap routine, without
// the atomicity. Programs use atomic128.Uint64Pair, which chooses a routine
// the CPU supports, aligns the pair, falls back to locks where there are no
// 128-bit instructions, and tells the race detector what the routines do.
//
// The routines themselves are internal to the module: run on a CPU without
// their instruction or on a misaligned pointer they fault, which no recover
// can catch, so nothing outside atomic128 can call them. Their table (each
// routine's instructions, pseudo-code and memory ordering) is in gen/spec.go
// in the repository; atomic128's doc says which runs on which CPU.
//
// Ordering contract of those routines: every one is sequentially
// consistent, as the operations of sync/atomic are. All routines that touch
// the same pair are totally ordered, and that order is consistent with each
// goroutine's program order and with sync/atomic operations on other memory.
package asm
