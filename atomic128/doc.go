// Package atomic128 provides Uint64Pair, a 128-bit cell holding two uint64
// values that are loaded, stored, swapped and compared-and-swapped as one.
// Use it for lock-free state that does not fit 64 bits (a value and a
// version, a time and a count); cellrate's bucket and window limiters are
// built on it. See ExampleUint64Pair.
//
// The API follows the accepted proposal golang/go#61236 (sync/atomic.Uint64Pair),
// so callers can move to the standard library type when it ships.
//
// Ordering: every operation is sequentially consistent, as the operations of
// sync/atomic are. A successful CompareAndSwap, Store or Swap happens before
// any Load, CompareAndSwap or Swap that observes the pair it wrote.
//
// The zero value is a pair of zeros, ready to use. A Uint64Pair must not be
// copied after first use (go vet reports copies).
//
// Implementation: the instructions are chosen once at start-up (Path tells
// which, LockFree whether they are lock-free):
//
//	path          CPU                                     Load        Store, Swap, CompareAndSwap
//	cx16-vmovdqa  amd64, CX16 + AVX, Intel or AMD         VMOVDQA     LOCK CMPXCHG16B
//	cx16          amd64, CX16                             CMPXCHG16B  LOCK CMPXCHG16B
//	casp          arm64 with LSE (ARMv8.1)                CASPAL      CASPAL
//	llsc          arm64 without LSE (ARMv8.0)             LDAXP/STLXP LDAXP/STLXP
//	fallback      everything else, and the purego tag     seqlock     seqlock
//
// The fallback hashes the pair's address to one of 64 seqlocks on their own
// cache lines (no global lock): a Load writes nothing and retries while a
// writer holds its stripe; writers of pairs on the same stripe serialize.
// It never executes an instruction the CPU may lack.
//
// Under the race detector the operations report their synchronization
// (runtime.RaceReleaseMerge before a write, runtime.RaceAcquire after a
// read), so data published through a Uint64Pair is not reported as a race
// while unordered accesses to other data still are.
package atomic128

//go:generate go -C ../gen run . -pkg atomic128
