package journalfile

import (
	"hash/crc32"

	"github.com/dutyrt/duty/internal/x86"
)

// CPUID leaf 1, ECX: bit 20 is SSE4.2 (the CRC32 instruction), bit 1
// PCLMULQDQ (carry-less multiplication). Every x86-64 processor since
// Westmere and Bulldozer has both. Read by crcUpdate.
var hasSSE42, hasCLMUL = func() (bool, bool) {
	_, _, ecx, _ := x86.CPUID(1, 0)
	return ecx&(1<<20) != 0, ecx&(1<<1) != 0
}()

// crcSerialMax is the longest input crcUpdate computes serially when the
// processor has no PCLMULQDQ (longer ones go to crcUpdateLong);
// crcTripleMin the shortest it splits into three streams when it has.
// crcTripleWords bounds a stream's length in 8-byte words, and so
// crcShift's size: longer inputs are split in blocks of three such
// streams. crc_amd64.s states them again.
const (
	crcSerialMax   = 503
	crcTripleMin   = 96
	crcTripleWords = 128
)

// crcUpdate is crc32.Update(crc, Castagnoli, p), with the CRC32
// instruction. From crcTripleMin bytes on (with PCLMULQDQ), it splits p
// into three streams of equal length, whose instructions overlap (each
// CRC32 waits for the result of the one before it in its stream, not for
// the other streams'), after a serial head of the bytes that do not
// divide by three words; it joins the streams' CRCs with crcShift. Shorter
// inputs take one serial loop, 8 bytes a step, then 4, 2 and 1. Without
// SSE4.2, or without PCLMULQDQ past crcSerialMax bytes, it jumps to
// crcUpdateLong.
//
//go:noescape
func crcUpdate(crc uint32, p []byte) uint32

// crcUpdateLong is crcUpdate's path without the instructions it needs.
//
//lint:ignore U1000 crc_amd64.s jumps to it
func crcUpdateLong(crc uint32, p []byte) uint32 { return crc32.Update(crc, Castagnoli, p) }

// crcShift[w] holds the multipliers that move a stream's CRC past the
// streams after it, for streams of w words (8w bytes): [0] past two
// streams (16w bytes), [1] past one (8w bytes). A CRC c (the register
// value, not inverted) moved past m zero bytes is c·x^(8m) mod P, the
// Castagnoli polynomial; PCLMULQDQ of c and x^(8m-33) mod P (both bit
// reflected, as the CRC32 instruction keeps them) gives a 64-bit product
// that one CRC32 instruction from 0 reduces to exactly that: the
// product's bit order adds one power of x, the instruction 32 more.
//
//lint:ignore U1000 crc_amd64.s reads it
var crcShift = func() (t [crcTripleWords + 1][2]uint64) {
	for w := 1; w <= crcTripleWords; w++ {
		t[w] = [2]uint64{uint64(xPowMod(8*16*w - 33)), uint64(xPowMod(8*8*w - 33))}
	}
	return t
}()

// xPowMod returns x^e mod P, P the Castagnoli polynomial, bit reflected
// (bit 31 is x^0): x^0, then e multiplications by x.
func xPowMod(e int) uint32 {
	const reflected = 0x82F63B78 // the Castagnoli polynomial, bit reflected
	v := uint32(1) << 31
	for range e {
		if v&1 != 0 {
			v = v>>1 ^ reflected
		} else {
			v >>= 1
		}
	}
	return v
}
