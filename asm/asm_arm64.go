//go:build gc && !purego && arm64

package asm

// The bodies are in asm_arm64.s, written by hand (avo emits amd64 only).
// The *CASP routines require LSE atomics (ARMv8.1, HWCAP "atomics"); the
// *LLSC routines run on every ARMv8 CPU. p must be 16-byte aligned.
//
// Ordering: every routine is sequentially consistent. The CASP routines
// use CASPAL, which Go's assembler cannot spell (its CASPD is the plain
// CASP, with no ordering), so it is encoded with WORD: acquire on the read
// and release on the write, the same ordering the runtime's CASALD gives
// sync/atomic's 64-bit CAS, and SC against LDAR/STLR because ARMv8's
// acquire/release are RCsc. The LLSC routines pair LDAXP (acquire) with
// STLXP (release), as the runtime's ARMv8.0 atomics pair LDAXR and STLXR.
//
// A 128-bit LDXP/LDAXP alone is not single-copy atomic on ARMv8.0: a load
// is confirmed by a successful store-exclusive of the value it read.

// CasCASP is a 128-bit compare-and-swap by one CASPAL.
//
//	atomically { if *p == (old1, old2) { *p = (new1, new2); return true }; return false }
//
//go:noescape
func CasCASP(p *[2]uint64, old1, old2, new1, new2 uint64) (swapped bool)

// LoadCASP is a 128-bit load by CASPAL of (0, 0) with (0, 0).
//
//	atomically { v := *p; if v == (0, 0) { *p = (0, 0) }; return v }
//
//go:noescape
func LoadCASP(p *[2]uint64) (v1, v2 uint64)

// StoreCASP is a 128-bit store by a CASPAL loop.
//
//	atomically { *p = (v1, v2) }
//
// The first compare uses a plain (possibly torn) LDP as its guess; each
// failed CASPAL returns the current value, which the next try expects.
//
//go:noescape
func StoreCASP(p *[2]uint64, v1, v2 uint64)

// SwapCASP is a 128-bit swap by a CASPAL loop, as StoreCASP.
//
//	atomically { old := *p; *p = (new1, new2); return old }
//
//go:noescape
func SwapCASP(p *[2]uint64, new1, new2 uint64) (old1, old2 uint64)

// CasLLSC is a 128-bit compare-and-swap by an LDAXP/STLXP loop.
//
//	atomically { if *p == (old1, old2) { *p = (new1, new2); return true }; return false }
//
// A mismatch returns false without a store: even a torn LDAXP that differs
// from (old1, old2) combines halves of values the pair held during the
// call, one of which differs, so the failure is linearizable.
//
//go:noescape
func CasLLSC(p *[2]uint64, old1, old2, new1, new2 uint64) (swapped bool)

// LoadLLSC is a 128-bit load by LDAXP confirmed by STLXP of the same value.
//
//	atomically { return *p }
//
//go:noescape
func LoadLLSC(p *[2]uint64) (v1, v2 uint64)

// StoreLLSC is a 128-bit store by an LDAXP/STLXP loop.
//
//	atomically { *p = (v1, v2) }
//
//go:noescape
func StoreLLSC(p *[2]uint64, v1, v2 uint64)

// SwapLLSC is a 128-bit swap by an LDAXP/STLXP loop.
//
//	atomically { old := *p; *p = (new1, new2); return old }
//
//go:noescape
func SwapLLSC(p *[2]uint64, new1, new2 uint64) (old1, old2 uint64)

// SpinHint executes YIELD: a hint for spin-wait loops, no memory effect.
func SpinHint()

// BareCASPAL executes one CASPAL of (0, 0) with (0, 0) on p and returns
// nothing: the floor for benchmarks, not for use.
//
//go:noescape
func BareCASPAL(p *[2]uint64)

// BareLDAXPSTLXP executes one LDAXP and one STLXP of the value read, without
// retrying, and returns nothing: the floor for benchmarks, not for use.
//
//go:noescape
func BareLDAXPSTLXP(p *[2]uint64)
