//go:build gc && !purego && amd64

package asm128

import "golang.org/x/sys/cpu"

// routineSets are the combinations atomic128's paths use, with whether this
// CPU can run them (VMOVDQA's atomicity needs a vendor check, its execution
// only AVX).
var routineSets = []routineSet{
	{"cx16", cpu.X86.HasCX16, CasCX16, LoadCX16, StoreCX16, SwapCX16},
	{"cx16-vmovdqa", cpu.X86.HasCX16 && cpu.X86.HasAVX, CasCX16, LoadVMOVDQA, StoreCX16, SwapCX16},
}
