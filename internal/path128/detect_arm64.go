//go:build gc && !purego && arm64

package path128

import "golang.org/x/sys/cpu"

// detect: CASP needs LSE (ARMv8.1 atomics); LDAXP/STLXP exist on every
// ARMv8 CPU.
func detect() []Path {
	if cpu.ARM64.HasATOMICS {
		return []Path{CASP, LLSC, Fallback}
	}
	return []Path{LLSC, Fallback}
}
