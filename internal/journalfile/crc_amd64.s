#include "textflag.h"

// func crcUpdate(crc uint32, p []byte) uint32
TEXT ·crcUpdate(SB),NOSPLIT|NOFRAME,$0-36
	MOVQ p_len+16(FP), CX
	CMPQ CX, $503 // crcSerialMax
	JA   long
	CMPB ·hasSSE42(SB), $0
	JEQ  long
	MOVL crc+0(FP), AX
	NOTL AX
	MOVQ p_base+8(FP), SI
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
