//go:build gc && !purego && amd64

package path128

import (
	"github.com/klauspost/cpuid/v2"
	"golang.org/x/sys/cpu"
)

// detect: CMPXCHG16B needs CX16. A 16-byte VMOVDQA load is documented as
// atomic only by Intel and AMD, for CPUs with AVX (x/sys/cpu's HasAVX also
// requires the OS to have enabled the AVX state).
func detect() []Path {
	if !cpu.X86.HasCX16 {
		return []Path{Fallback}
	}
	v := cpuid.CPU.VendorID
	if cpu.X86.HasAVX && (v == cpuid.Intel || v == cpuid.AMD) {
		return []Path{CX16VMOVDQA, CX16, Fallback}
	}
	return []Path{CX16, Fallback}
}
