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
