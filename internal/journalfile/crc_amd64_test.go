package journalfile

import (
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

// Without SSE4.2 every input takes crcUpdateLong, and agrees all the same.
func TestCRCUpdateWithoutSSE42(t *testing.T) {
	defer func(had bool) { hasSSE42 = had }(hasSSE42)
	hasSSE42 = false
	TestCRCUpdateIsCastagnoli(t)
}

// Without PCLMULQDQ the serial loop runs up to crcSerialMax bytes and
// crcUpdateLong past it, and agree all the same.
func TestCRCUpdateWithoutCLMUL(t *testing.T) {
	defer func(had bool) { hasCLMUL = had }(hasCLMUL)
	hasCLMUL = false
	TestCRCUpdateIsCastagnoli(t)
	TestCRCUpdateAcrossBlocks(t)
}

// xPowMod's arithmetic: x^32 mod P is P without its x^32 term, which
// is the reflected constant itself; x^31 is bit 0.
func TestXPowMod(t *testing.T) {
	if got := xPowMod(32); got != 0x82F63B78 {
		t.Fatalf("x^32 mod P = %#x, want %#x", got, 0x82F63B78)
	}
	if got := xPowMod(31); got != 1 {
		t.Fatalf("x^31 mod P = %#x, want 1", got)
	}
}

// The lengths where crcUpdate changes paths agree with hash/crc32: the
// serial loop's last and the three streams' first, the serial limit
// without PCLMULQDQ, and one and two full blocks of three streams with
// the most and the least left over for the serial tail.
func TestCRCUpdateAtTheLimits(t *testing.T) {
	block := 3 * 8 * crcTripleWords
	p := make([]byte, 2*block+crcTripleMin+24)
	for i := range p {
		p[i] = byte(i * 7)
	}
	for _, n := range []int{crcTripleMin - 1, crcTripleMin, crcTripleMin + 23, crcTripleMin + 24,
		crcSerialMax, crcSerialMax + 1, block - 1, block, block + 1, block + crcTripleMin - 1,
		block + crcTripleMin, 2 * block, 2*block + crcTripleMin + 23} {
		if got, want := crcUpdate(1, p[:n]), crc32.Update(1, Castagnoli, p[:n]); got != want {
			t.Fatalf("%d bytes: %#x, want %#x", n, got, want)
		}
	}
}

// Inputs of more than one block of three streams, at every alignment
// and from any starting CRC, agree with hash/crc32.
func TestCRCUpdateAcrossBlocks(t *testing.T) {
	block := 3 * 8 * crcTripleWords
	buf := make([]byte, 4*block+200)
	r := rand.New(rand.NewPCG(3, 4))
	for i := range buf {
		buf[i] = byte(r.Uint32())
	}
	var lengths []int
	for _, base := range []int{block, 2 * block, 3 * block} {
		for n := base - 30; n <= base+crcTripleMin+30; n++ {
			lengths = append(lengths, n)
		}
	}
	lengths = append(lengths, 4*block+193)
	for _, crc := range []uint32{0, 0xFFFFFFFF, r.Uint32()} {
		for align := range 8 {
			for _, n := range lengths {
				p := buf[align : align+n]
				if got, want := crcUpdate(crc, p), crc32.Update(crc, Castagnoli, p); got != want {
					t.Fatalf("crc %#x, %d bytes at offset %d: %#x, want %#x", crc, n, align, got, want)
				}
			}
		}
	}
}
