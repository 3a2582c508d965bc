package journalfile

import (
	"hash/crc32"

	"github.com/dutyrt/duty/internal/x86"
)

// hasSSE42: CPUID leaf 1, ECX bit 20 (the CRC32 instruction). Every
// x86-64 processor since Nehalem and Bulldozer has it. Read by crcUpdate.
var hasSSE42 = func() bool {
	_, _, ecx, _ := x86.CPUID(1, 0)
	return ecx&(1<<20) != 0
}()

// crcSerialMax is the longest input crcUpdate computes itself, and
// crcUpdateLong the rest: hash/crc32 splits longer inputs into three
// streams whose CRC instructions overlap; below this it runs the same
// serial loop as crcUpdate, behind a dispatch and two calls that cost a
// short record more than its bytes. crc_amd64.s states it again.
const crcSerialMax = 503

// crcUpdate is crc32.Update(crc, Castagnoli, p): up to crcSerialMax
// bytes, with the CRC32 instruction 8 bytes at a time, then 4, 2 and 1,
// in one call; longer (or without SSE4.2), by a jump to crcUpdateLong.
//
//go:noescape
func crcUpdate(crc uint32, p []byte) uint32

// crcUpdateLong is crcUpdate's path for long inputs.
//
//lint:ignore U1000 crc_amd64.s jumps to it
func crcUpdateLong(crc uint32, p []byte) uint32 { return crc32.Update(crc, Castagnoli, p) }
