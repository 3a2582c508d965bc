//go:build amd64 && !race

#include "textflag.h"

// func storeRel64(p *int64, v int64)
// A plain aligned MOV: atomic on amd64, and a release store under x86-TSO.
TEXT ·storeRel64(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), AX
	MOVQ v+8(FP), BX
	MOVQ BX, 0(AX)
	RET

// func storeRel32(p *int32, v int32)
TEXT ·storeRel32(SB), NOSPLIT, $0-12
	MOVQ p+0(FP), AX
	MOVL v+8(FP), BX
	MOVL BX, 0(AX)
	RET

// func storeRel64Pair(p1 *int64, v1 int64, p2 *int64, v2 int64)
// Two plain MOVs in program order: x86-TSO makes them visible in that order.
TEXT ·storeRel64Pair(SB), NOSPLIT, $0-32
	MOVQ p1+0(FP), AX
	MOVQ v1+8(FP), BX
	MOVQ p2+16(FP), CX
	MOVQ v2+24(FP), DX
	MOVQ BX, 0(AX)
	MOVQ DX, 0(CX)
	RET
