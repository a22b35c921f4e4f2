package atomic128

import "github.com/cellrate/cellrate/internal/path128"

// Path names the implementation that runs the operations: "cx16-vmovdqa"
// (amd64: LOCK CMPXCHG16B, Load by VMOVDQA), "cx16" (amd64: all by LOCK
// CMPXCHG16B), "casp" (arm64 with LSE: CASPAL), "llsc" (arm64 without LSE:
// LDAXP/STLXP loops) or "fallback" (seqlocks in Go).
//
// It is chosen once at start-up from the CPU's features; the environment
// variable CELLRATE_ATOMIC128_PATH, if set, forces a path the CPU supports
// (an unsupported or unknown one selects "fallback").
func Path() string { return path128.Active.String() }

// LockFree reports whether the operations run on 128-bit atomic instructions
// (every path but "fallback").
func LockFree() bool { return path128.Active != path128.Fallback }
