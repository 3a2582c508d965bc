#include "textflag.h"

// crcTripleMin, crcTripleWords and crcSerialMax: crc_amd64.go.
#define TRIPLE_MIN 96
#define TRIPLE_WORDS 128
#define SERIAL_MAX 503

// func crcUpdate(crc uint32, p []byte) uint32
//
// Registers: AX the CRC (in the three-stream part, stream A's), CX the
// bytes left, SI the next byte; in the three-stream part BX and DX
// streams B's and C's CRCs, R8 the words left in each stream, R9 the
// words per stream, R13 the bytes per stream. X0-X3 hold the join's
// operands.
TEXT ·crcUpdate(SB),NOSPLIT|NOFRAME,$0-36
	MOVQ p_len+16(FP), CX
	CMPB ·hasSSE42(SB), $0
	JEQ  long
	CMPB ·hasCLMUL(SB), $0
	JNE  start
	CMPQ CX, $SERIAL_MAX
	JA   long

start:
	MOVL crc+0(FP), AX
	NOTL AX
	MOVQ p_base+8(FP), SI

triple:
	CMPQ CX, $TRIPLE_MIN
	JB   serial
	CMPB ·hasCLMUL(SB), $0
	JEQ  serial
	// R9 = words per stream: CX/24, as (CX/8)*0xAAAAAAAB >> 33 (exact
	// for CX/8 < 2^32; larger inputs take the bound anyway), at most
	// TRIPLE_WORDS.
	MOVQ $TRIPLE_WORDS, R9
	MOVQ CX, R10
	SHRQ $3, R10
	MOVQ $0xFFFFFFFF, R11
	CMPQ R10, R11
	JA   words
	MOVL $0xAAAAAAAB, R11
	IMULQ R11, R10
	SHRQ $33, R10
	CMPQ R10, R9
	JAE  words
	MOVQ R10, R9

words:
	MOVQ R9, R8
	MOVQ R9, R13
	SHLQ $3, R13
	XORL BX, BX
	XORL DX, DX

streams:
	CRC32Q (SI), AX
	CRC32Q (SI)(R13*1), BX
	CRC32Q (SI)(R13*2), DX
	ADDQ   $8, SI
	DECQ   R8
	JNZ    streams

	// SI is at stream B's start: past B and C. CX -= 3*R13.
	LEAQ (SI)(R13*2), SI
	LEAQ (R13)(R13*2), R10
	SUBQ R10, CX

	// Join: AX = shift(A, 2 streams) ^ shift(B, 1 stream) ^ C, each
	// shift a PCLMULQDQ by crcShift[R9] and a CRC32 from 0.
	SHLQ $4, R9
	LEAQ ·crcShift(SB), R10
	MOVQ AX, X0
	MOVQ (R10)(R9*1), X1
	PCLMULQDQ $0x00, X1, X0
	MOVQ BX, X2
	MOVQ 8(R10)(R9*1), X3
	PCLMULQDQ $0x00, X3, X2
	MOVQ X0, R11
	MOVQ X2, R12
	XORL AX, AX
	CRC32Q R11, AX
	XORL BX, BX
	CRC32Q R12, BX
	XORL BX, AX
	XORL DX, AX
	JMP  triple

serial:
	CMPQ CX, $8
	JB   tail4

loop8:
	CRC32Q (SI), AX
	ADDQ   $8, SI
	SUBQ   $8, CX
	CMPQ   CX, $8
	JAE    loop8

tail4:
	CMPQ   CX, $4
	JB     tail2
	CRC32L (SI), AX
	ADDQ   $4, SI
	SUBQ   $4, CX

tail2:
	CMPQ   CX, $2
	JB     tail1
	CRC32W (SI), AX
	ADDQ   $2, SI
	SUBQ   $2, CX

tail1:
	TESTQ  CX, CX
	JZ     done
	CRC32B (SI), AX

done:
	NOTL AX
	MOVL AX, ret+32(FP)
	RET

long:
	JMP ·crcUpdateLong(SB) // same arguments, same result slot
