package journalfile

import (
	"hash/crc32"
	"testing"
)

// Without SSE4.2 every input takes crcUpdateLong, and agrees all the same.
func TestCRCUpdateWithoutSSE42(t *testing.T) {
	defer func(had bool) { hasSSE42 = had }(hasSSE42)
	hasSSE42 = false
	TestCRCUpdateIsCastagnoli(t)
}

// The assembly's limit is crcSerialMax: the last length it computes
// itself and the first it hands on agree with hash/crc32.
func TestCRCUpdateAtTheSerialLimit(t *testing.T) {
	p := make([]byte, crcSerialMax+1)
	for i := range p {
		p[i] = byte(i * 7)
	}
	for _, n := range []int{crcSerialMax, crcSerialMax + 1} {
		if got, want := crcUpdate(1, p[:n]), crc32.Update(1, Castagnoli, p[:n]); got != want {
			t.Fatalf("%d bytes: %#x, want %#x", n, got, want)
		}
	}
}
