// Hand-written: avo generates amd64 only. The comment at the head of each
// routine (declaration, pseudo-code, ordering) is written by gen from its
// table, as floor_arm64.go is (go generate ./internal/floor).

//go:build gc && !purego && arm64

#include "textflag.h"

// CASPAL (Rs, Rs+1), (Rn), (Rt, Rt+1), encoded by hand as in asm/asm_arm64.s.
#define CASPAL(s, n, t) WORD $(0x4860fc00 | (s<<16) | (n<<5) | t)

// func BareCASPAL(p *[2]uint64)
TEXT ·BareCASPAL(SB), NOSPLIT, $0-8
	// atomically { v := *p; if v == (0, 0) { *p = (0, 0) }; return v }  (results discarded)
	// Ordering: sequentially consistent: CASPAL (acquire and release, RCsc).
	MOVD	p+0(FP), R0
	MOVD	ZR, R4
	MOVD	ZR, R5
	MOVD	ZR, R6
	MOVD	ZR, R7
	CASPAL(4, 0, 6)          // CASPAL (R4, R5), (R0), (R6, R7)
	RET

// func BareLDAXPSTLXP(p *[2]uint64)
TEXT ·BareLDAXPSTLXP(SB), NOSPLIT, $0-8
	// v := *p; *p = v  (one LDAXP/STLXP attempt, not retried: atomic only if the STLXP succeeded)
	// Ordering: LDAXP acquire, STLXP release.
	MOVD	p+0(FP), R0
	LDAXP	(R0), (R4, R5)
	STLXP	(R4, R5), (R0), R6
	RET
