// Hand-written: avo generates amd64 only. The comment at the head of each
// routine (declaration, pseudo-code, ordering) is written by gen from its
// table, as dispatch_arm64.go is (go generate ./atomic128).

//go:build gc && !purego && arm64

#include "textflag.h"
#include "go_asm.h"

// Each routine loads path128.Active into R9 (free in a frameless ABI0
// routine) and jumps to the casp routine, the llsc routine or the fallback.
// A jump (B), not a call: the routine jumped to returns to the caller. The
// assembler reads ∕ as / and · as . in a symbol.

// func load(p *[2]uint64) (v1 uint64, v2 uint64)
TEXT ·load(SB), NOSPLIT, $0-24
	// atomically { return *p }
	// Ordering: that of the routine it runs, sequentially consistent on every
	// path.
	MOVBU	github·com∕cellrate∕cellrate∕internal∕path128·Active(SB), R9
	CMP	$const_pathCASP, R9
	BNE	2(PC)
	B	github·com∕cellrate∕cellrate∕internal∕asm128·LoadCASP(SB)
	CMP	$const_pathLLSC, R9
	BNE	2(PC)
	B	github·com∕cellrate∕cellrate∕internal∕asm128·LoadLLSC(SB)
	B	·fallbackLoad(SB)

// func store(p *[2]uint64, v1 uint64, v2 uint64)
TEXT ·store(SB), NOSPLIT, $0-24
	// atomically { *p = (v1, v2) }
	// Ordering: that of the routine it runs, sequentially consistent on every
	// path.
	MOVBU	github·com∕cellrate∕cellrate∕internal∕path128·Active(SB), R9
	CMP	$const_pathCASP, R9
	BNE	2(PC)
	B	github·com∕cellrate∕cellrate∕internal∕asm128·StoreCASP(SB)
	CMP	$const_pathLLSC, R9
	BNE	2(PC)
	B	github·com∕cellrate∕cellrate∕internal∕asm128·StoreLLSC(SB)
	B	·fallbackStore(SB)

// func swap(p *[2]uint64, new1 uint64, new2 uint64) (old1 uint64, old2 uint64)
TEXT ·swap(SB), NOSPLIT, $0-40
	// atomically { old := *p; *p = (new1, new2); return old }
	// Ordering: that of the routine it runs, sequentially consistent on every
	// path.
	MOVBU	github·com∕cellrate∕cellrate∕internal∕path128·Active(SB), R9
	CMP	$const_pathCASP, R9
	BNE	2(PC)
	B	github·com∕cellrate∕cellrate∕internal∕asm128·SwapCASP(SB)
	CMP	$const_pathLLSC, R9
	BNE	2(PC)
	B	github·com∕cellrate∕cellrate∕internal∕asm128·SwapLLSC(SB)
	B	·fallbackSwap(SB)

// func cas(p *[2]uint64, old1 uint64, old2 uint64, new1 uint64, new2 uint64) (swapped bool)
TEXT ·cas(SB), NOSPLIT, $0-41
	// atomically { if *p == (old1, old2) { *p = (new1, new2); return true }; return false }
	// Ordering: that of the routine it runs, sequentially consistent on every
	// path.
	MOVBU	github·com∕cellrate∕cellrate∕internal∕path128·Active(SB), R9
	CMP	$const_pathCASP, R9
	BNE	2(PC)
	B	github·com∕cellrate∕cellrate∕internal∕asm128·CasCASP(SB)
	CMP	$const_pathLLSC, R9
	BNE	2(PC)
	B	github·com∕cellrate∕cellrate∕internal∕asm128·CasLLSC(SB)
	B	·fallbackCas(SB)
