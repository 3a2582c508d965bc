package journalfile

import (
	"encoding/binary"
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

// crcUpdate agrees with hash/crc32 for every length around the serial
// path's limit and every alignment of the input, from any starting CRC.
func TestCRCUpdateIsCastagnoli(t *testing.T) {
	buf := make([]byte, 1100) // both sides of the amd64 paths' limits, but the blocks'
	r := rand.New(rand.NewPCG(1, 2))
	for i := range buf {
		buf[i] = byte(r.Uint32())
	}
	for _, crc := range []uint32{0, 0xFFFFFFFF, r.Uint32()} {
		for align := range 8 {
			for n := 0; align+n <= len(buf); n++ {
				p := buf[align : align+n]
				if got, want := crcUpdate(crc, p), crc32.Update(crc, Castagnoli, p); got != want {
					t.Fatalf("crc %#x, %d bytes at offset %d: %#x, want %#x", crc, n, align, got, want)
				}
			}
		}
	}
}

func FuzzCRCUpdate(f *testing.F) {
	f.Add(uint32(0), []byte("DUTYJSEG"))
	long := make([]byte, 3*8*128+100) // past one block of crc_amd64.s's three streams
	for i := range long {
		long[i] = byte(i * 13)
	}
	f.Add(uint32(0x12345678), long)
	f.Fuzz(func(t *testing.T, crc uint32, p []byte) {
		if got, want := crcUpdate(crc, p), crc32.Update(crc, Castagnoli, p); got != want {
			t.Fatalf("%d bytes: %#x, want %#x", len(p), got, want)
		}
	})
}

// A record's CRC continued from HeaderPrefixCRC of its stream, type and
// flags is RecordCRC, whatever those words and the body hold.
func TestPrefixedRecordCRCIsRecordCRC(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for n := RecordHeaderLength; n < RecordHeaderLength+300; n += 7 {
		rec := make([]byte, n)
		for i := range rec {
			rec[i] = byte(r.Uint32())
		}
		le := binary.LittleEndian
		le.PutUint32(rec[MagicOffset:], RecordMagic)
		stream, typeID, flags := le.Uint32(rec[StreamOffset:]), int32(le.Uint32(rec[TypeOffset:])), le.Uint32(rec[FlagsOffset:])
		if got, want := PrefixedRecordCRC(HeaderPrefixCRC(stream, typeID, flags), rec), RecordCRC(rec); got != want {
			t.Fatalf("%d bytes: %#x, want %#x", n, got, want)
		}
	}
}
