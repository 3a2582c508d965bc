#include "textflag.h"

// func writeBlock(p unsafe.Pointer)
// PREFETCHW is emitted as bytes (0F 0D /1): the Go assembler has no
// mnemonic for it. Without it (·hasPrefetchW false) the block is
// prefetched for reading.
TEXT ·writeBlock(SB),NOSPLIT|NOFRAME,$0-8
	CMPB ·Disabled(SB), $0
	JNE  done
	MOVQ p+0(FP), AX
	CMPB ·hasPrefetchW(SB), $0
	JEQ  noW
	BYTE $0x0f; BYTE $0x0d; BYTE $0x08 // PREFETCHW (AX)
	ADDQ $64, AX
	BYTE $0x0f; BYTE $0x0d; BYTE $0x08 // PREFETCHW (AX)
	ADDQ $64, AX
	BYTE $0x0f; BYTE $0x0d; BYTE $0x08 // PREFETCHW (AX)
	ADDQ $64, AX
	BYTE $0x0f; BYTE $0x0d; BYTE $0x08 // PREFETCHW (AX)
	ADDQ $64, AX
	BYTE $0x0f; BYTE $0x0d; BYTE $0x08 // PREFETCHW (AX)
	ADDQ $64, AX
	BYTE $0x0f; BYTE $0x0d; BYTE $0x08 // PREFETCHW (AX)
	ADDQ $64, AX
	BYTE $0x0f; BYTE $0x0d; BYTE $0x08 // PREFETCHW (AX)
	ADDQ $64, AX
	BYTE $0x0f; BYTE $0x0d; BYTE $0x08 // PREFETCHW (AX)
done:
	RET
noW:
	PREFETCHT0 (AX)
	PREFETCHT0 64(AX)
	PREFETCHT0 128(AX)
	PREFETCHT0 192(AX)
	PREFETCHT0 256(AX)
	PREFETCHT0 320(AX)
	PREFETCHT0 384(AX)
	PREFETCHT0 448(AX)
	RET

// func readBlock(p unsafe.Pointer)
TEXT ·readBlock(SB),NOSPLIT|NOFRAME,$0-8
	CMPB ·Disabled(SB), $0
	JNE  rdone
	MOVQ p+0(FP), AX
	PREFETCHT0 (AX)
	PREFETCHT0 64(AX)
	PREFETCHT0 128(AX)
	PREFETCHT0 192(AX)
	PREFETCHT0 256(AX)
	PREFETCHT0 320(AX)
	PREFETCHT0 384(AX)
	PREFETCHT0 448(AX)
rdone:
	RET

// func demoteLines(p unsafe.Pointer, n int)
// CLDEMOTE is emitted as bytes (NP 0F 1C /0): the Go assembler has no
// mnemonic for it. The encoding is in the hint-NOP space, so a CPU without
// CLDEMOTE would execute it as a NOP; ·hasCLDEMOTE skips the loop there
// anyway.
TEXT ·demoteLines(SB),NOSPLIT|NOFRAME,$0-16
	CMPB ·NoDemote(SB), $0
	JNE  ddone
	CMPB ·hasCLDEMOTE(SB), $0
	JEQ  ddone
	MOVQ p+0(FP), AX
	MOVQ n+8(FP), CX
	TESTQ CX, CX
	JLE  ddone
dloop:
	BYTE $0x0f; BYTE $0x1c; BYTE $0x00 // CLDEMOTE (AX)
	ADDQ $64, AX
	DECQ CX
	JNZ  dloop
ddone:
	RET

// func writeRange(p unsafe.Pointer, n int)
// The lines holding [p, p+min(n, 512)): from p's line to the last byte's.
TEXT ·writeRange(SB),NOSPLIT|NOFRAME,$0-16
	CMPB ·Disabled(SB), $0
	JNE  wrdone
	MOVQ p+0(FP), AX
	MOVQ n+8(FP), CX
	TESTQ CX, CX
	JLE  wrdone
	CMPQ CX, $512
	JLE  wrclamped
	MOVQ $512, CX
wrclamped:
	LEAQ -1(AX)(CX*1), CX // the last byte
	ANDQ $-64, AX
	CMPB ·hasPrefetchW(SB), $0
	JEQ  wrread
wrloop:
	BYTE $0x0f; BYTE $0x0d; BYTE $0x08 // PREFETCHW (AX)
	ADDQ $64, AX
	CMPQ AX, CX
	JLS  wrloop
wrdone:
	RET
wrread:
	PREFETCHT0 (AX)
	ADDQ $64, AX
	CMPQ AX, CX
	JLS  wrread
	RET
