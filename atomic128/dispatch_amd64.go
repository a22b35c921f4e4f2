//go:build gc && !purego && amd64

package atomic128

import (
	"github.com/cellrate/cellrate/asm"
	"github.com/cellrate/cellrate/internal/path128"
)

// The hardware paths of this architecture. The methods branch on the path
// chosen at start-up (a predictable compare of a global) and call these
// one-line wrappers, which inline to a direct call of the assembly.
const (
	primary   = path128.CX16VMOVDQA
	secondary = path128.CX16
)

func loadPrimary(p *[2]uint64) (v1, v2 uint64)   { return asm.LoadVMOVDQA(p) }
func loadSecondary(p *[2]uint64) (v1, v2 uint64) { return asm.LoadCX16(p) }

func storePrimary(p *[2]uint64, v1, v2 uint64)   { asm.StoreCX16(p, v1, v2) }
func storeSecondary(p *[2]uint64, v1, v2 uint64) { asm.StoreCX16(p, v1, v2) }

func swapPrimary(p *[2]uint64, v1, v2 uint64) (o1, o2 uint64) {
	return asm.SwapCX16(p, v1, v2)
}

func swapSecondary(p *[2]uint64, v1, v2 uint64) (o1, o2 uint64) {
	return asm.SwapCX16(p, v1, v2)
}

func casPrimary(p *[2]uint64, o1, o2, n1, n2 uint64) bool {
	return asm.CasCX16(p, o1, o2, n1, n2)
}

func casSecondary(p *[2]uint64, o1, o2, n1, n2 uint64) bool {
	return asm.CasCX16(p, o1, o2, n1, n2)
}
