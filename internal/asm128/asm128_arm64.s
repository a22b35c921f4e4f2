// Hand-written: avo generates amd64 only. The comment at the head of each
// routine (declaration, pseudo-code, ordering) is written by gen from its
// table, as asm_arm64.go is (go generate ./asm).

//go:build gc && !purego && arm64

#include "textflag.h"

// CASPAL (Rs, Rs+1), (Rn), (Rt, Rt+1): compare the pair at Rn with Rs:Rs+1;
// if equal, write Rt:Rt+1. Either way Rs:Rs+1 receive the old pair. Acquire
// and release. Go's CASPD encodes CASP without the L (bit 22) and o0 (bit
// 15) bits; CASPAL is that encoding, 0x48207c00, with both set. s and t must
// be even. Register order matches Go's "CASPD (Rs, Rs+1), (Rn), (Rt, Rt+1)".
#define CASPAL(s, n, t) WORD $(0x4860fc00 | (s<<16) | (n<<5) | t)

// func CasCASP(p *[2]uint64, old1 uint64, old2 uint64, new1 uint64, new2 uint64) (swapped bool)
TEXT ·CasCASP(SB), NOSPLIT, $0-41
	// atomically { if *p == (old1, old2) { *p = (new1, new2); return true }; return false }
	// Ordering: sequentially consistent: CASPAL (acquire and release, RCsc).
	MOVD	p+0(FP), R0
	MOVD	old1+8(FP), R4
	MOVD	old2+16(FP), R5
	MOVD	new1+24(FP), R6
	MOVD	new2+32(FP), R7
	MOVD	R4, R8
	MOVD	R5, R9
	CASPAL(4, 0, 6)          // CASPAL (R4, R5), (R0), (R6, R7)
	EOR	R4, R8, R8
	EOR	R5, R9, R9
	ORR	R8, R9, R9
	CMP	$0, R9
	CSET	EQ, R10
	MOVB	R10, swapped+40(FP)
	RET

// func LoadCASP(p *[2]uint64) (v1 uint64, v2 uint64)
TEXT ·LoadCASP(SB), NOSPLIT, $0-24
	// atomically { v := *p; if v == (0, 0) { *p = (0, 0) }; return v }
	// Ordering: sequentially consistent: CASPAL (acquire and release, RCsc).
	MOVD	p+0(FP), R0
	MOVD	ZR, R4
	MOVD	ZR, R5
	MOVD	ZR, R6
	MOVD	ZR, R7
	CASPAL(4, 0, 6)          // CASPAL (R4, R5), (R0), (R6, R7)
	MOVD	R4, v1+8(FP)
	MOVD	R5, v2+16(FP)
	RET

// func StoreCASP(p *[2]uint64, v1 uint64, v2 uint64)
TEXT ·StoreCASP(SB), NOSPLIT, $0-24
	// atomically { *p = (v1, v2) }
	// Ordering: sequentially consistent: the successful CASPAL.
	MOVD	p+0(FP), R0
	MOVD	v1+8(FP), R6
	MOVD	v2+16(FP), R7
	LDP	(R0), (R4, R5)   // a guess: a torn one only costs a retry
storecasp_retry:
	MOVD	R4, R8
	MOVD	R5, R9
	CASPAL(4, 0, 6)          // CASPAL (R4, R5), (R0), (R6, R7)
	CMP	R4, R8
	BNE	storecasp_retry
	CMP	R5, R9
	BNE	storecasp_retry
	RET

// func SwapCASP(p *[2]uint64, new1 uint64, new2 uint64) (old1 uint64, old2 uint64)
TEXT ·SwapCASP(SB), NOSPLIT, $0-40
	// atomically { old := *p; *p = (new1, new2); return old }
	// Ordering: sequentially consistent: the successful CASPAL.
	MOVD	p+0(FP), R0
	MOVD	new1+8(FP), R6
	MOVD	new2+16(FP), R7
	LDP	(R0), (R4, R5)   // a guess: a torn one only costs a retry
swapcasp_retry:
	MOVD	R4, R8
	MOVD	R5, R9
	CASPAL(4, 0, 6)          // CASPAL (R4, R5), (R0), (R6, R7)
	CMP	R4, R8
	BNE	swapcasp_retry
	CMP	R5, R9
	BNE	swapcasp_retry
	MOVD	R4, old1+24(FP)
	MOVD	R5, old2+32(FP)
	RET

// func CasLLSC(p *[2]uint64, old1 uint64, old2 uint64, new1 uint64, new2 uint64) (swapped bool)
TEXT ·CasLLSC(SB), NOSPLIT, $0-41
	// atomically { if *p == (old1, old2) { *p = (new1, new2); return true }; return false }
	// Ordering: sequentially consistent: LDAXP acquire, STLXP release; a
	// mismatch is ordered by the LDAXP's acquire alone, as the runtime's
	// ARMv8.0 Cas64.
	MOVD	p+0(FP), R0
	MOVD	old1+8(FP), R4
	MOVD	old2+16(FP), R5
	MOVD	new1+24(FP), R6
	MOVD	new2+32(FP), R7
casllsc_retry:
	LDAXP	(R0), (R8, R9)
	CMP	R4, R8
	BNE	casllsc_fail
	CMP	R5, R9
	BNE	casllsc_fail
	STLXP	(R6, R7), (R0), R10
	CBNZ	R10, casllsc_retry
	MOVD	$1, R11
	MOVB	R11, swapped+40(FP)
	RET
casllsc_fail:
	CLREX
	MOVB	ZR, swapped+40(FP)
	RET

// func LoadLLSC(p *[2]uint64) (v1 uint64, v2 uint64)
TEXT ·LoadLLSC(SB), NOSPLIT, $0-24
	// atomically { return *p }
	// Ordering: sequentially consistent: LDAXP acquire, confirmed by STLXP
	// (release) of the same value; a failed store-exclusive means the read may
	// be torn, and it retries.
	MOVD	p+0(FP), R0
loadllsc_retry:
	LDAXP	(R0), (R4, R5)
	STLXP	(R4, R5), (R0), R6
	CBNZ	R6, loadllsc_retry
	MOVD	R4, v1+8(FP)
	MOVD	R5, v2+16(FP)
	RET

// func StoreLLSC(p *[2]uint64, v1 uint64, v2 uint64)
TEXT ·StoreLLSC(SB), NOSPLIT, $0-24
	// atomically { *p = (v1, v2) }
	// Ordering: sequentially consistent: LDAXP acquire (it claims the
	// exclusive monitor), STLXP release.
	MOVD	p+0(FP), R0
	MOVD	v1+8(FP), R6
	MOVD	v2+16(FP), R7
storellsc_retry:
	LDAXP	(R0), (R4, R5)
	STLXP	(R6, R7), (R0), R8
	CBNZ	R8, storellsc_retry
	RET

// func SwapLLSC(p *[2]uint64, new1 uint64, new2 uint64) (old1 uint64, old2 uint64)
TEXT ·SwapLLSC(SB), NOSPLIT, $0-40
	// atomically { old := *p; *p = (new1, new2); return old }
	// Ordering: sequentially consistent: LDAXP acquire, STLXP release; the
	// successful store-exclusive confirms the value read.
	MOVD	p+0(FP), R0
	MOVD	new1+8(FP), R6
	MOVD	new2+16(FP), R7
swapllsc_retry:
	LDAXP	(R0), (R4, R5)
	STLXP	(R6, R7), (R0), R8
	CBNZ	R8, swapllsc_retry
	MOVD	R4, old1+24(FP)
	MOVD	R5, old2+32(FP)
	RET
