//go:build gc && !purego && arm64

package asm128

import "golang.org/x/sys/cpu"

// routineSets are the combinations atomic128's paths use, with whether this
// CPU can run them.
var routineSets = []routineSet{
	{"casp", cpu.ARM64.HasATOMICS, CasCASP, LoadCASP, StoreCASP, SwapCASP},
	{"llsc", true, CasLLSC, LoadLLSC, StoreLLSC, SwapLLSC},
}
