package mailboxframe

import (
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/mailboxdef"
	"github.com/dutyrt/duty/internal/record"
)

// The names the tests use, as package mailbox's do.
const (
	framedFlag  = record.FlagFramed
	checkedFlag = record.FlagChecked
	maxTypeID   = record.MaxTypeID
	minCapacity = mailboxdef.MinCapacity
)

// pattern returns n bytes that depend on seed and the offset.
func pattern(seed, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(seed*131 + i*7 + i>>8)
	}
	return b
}

func TestFrameHeaderRoundTrip(t *testing.T) {
	h := Header{Key: -2, Seq: 0x0102030405060708, Index: 3, Count: 4, BodyLen: 5000, Parts: 7}
	b := make([]byte, HeaderLength)
	PutHeader(b, &h)
	require.Equal(t, uint64(0xfffffffffffffffe), binary.LittleEndian.Uint64(b[0:]))
	require.Equal(t, uint64(0x0102030405060708), binary.LittleEndian.Uint64(b[8:]))
	require.Equal(t, uint32(3), binary.LittleEndian.Uint32(b[16:]))
	require.Equal(t, uint32(4), binary.LittleEndian.Uint32(b[20:]))
	require.Equal(t, uint32(5000), binary.LittleEndian.Uint32(b[24:]))
	require.Equal(t, uint32(7), binary.LittleEndian.Uint32(b[28:]))
	var g Header
	ReadHeader(b, &g)
	require.Equal(t, h, g)
}

func TestClassify(t *testing.T) {
	for _, c := range []struct {
		rec   int32
		class Class
		user  int32
	}{
		{1, Plain, 1},
		{maxTypeID, Plain, maxTypeID},
		{maxTypeID + 1, Invalid, 0},
		{framedFlag | 1, Framed, 1},
		{framedFlag | maxTypeID, Framed, maxTypeID},
		{framedFlag, Invalid, 0},             // no user type
		{framedFlag | 1<<24 | 5, Invalid, 0}, // other reserved bit
		{1<<29 | 5, Invalid, 0},              // reserved bit without the flag
		{0x7fffffff, Invalid, 0},
	} {
		class, user := Classify(c.rec)
		require.Equal(t, c.class, class, "type %#x", c.rec)
		require.Equal(t, c.user, user, "type %#x", c.rec)
	}
}

// The geometry of a 64 KiB ring: records of 8 KiB, batches of half the
// ring, and the largest message fills a batch exactly.
func TestLayout64K(t *testing.T) {
	l := NewLayout(64*1024, 8192, 0, false)
	require.Equal(t, 8192, l.MaxRecord)
	require.Equal(t, 8160, l.MaxFrag)
	require.Equal(t, 32768, l.MaxBatch)
	require.Equal(t, 3*8160+8128, l.MaxMessage)
	require.Equal(t, 4, l.MaxRecords)
	count, size := l.Records(l.MaxMessage)
	require.Equal(t, 4, count)
	require.Equal(t, 32768, size)
	count, size = l.Records(1)
	require.Equal(t, 1, count)
	require.Equal(t, record.Size(HeaderLength+1), size)
	count, _ = l.Records(8160)
	require.Equal(t, 1, count)
	count, _ = l.Records(8161)
	require.Equal(t, 2, count)

	small := NewLayout(64*1024, 8192, 1000, false)
	require.Equal(t, 1000, small.MaxMessage)
	require.Equal(t, 1, small.MaxRecords)
}

// Every capacity from the minimum up has a usable geometry whose largest
// message fits its batch limit, with checksummed records or without.
func TestLayoutCapacities(t *testing.T) {
	for _, checksum := range []bool{false, true} {
		for capacity := minCapacity; capacity <= 1<<26; capacity <<= 1 {
			l := NewLayout(capacity, max(8, capacity/8), 0, checksum)
			require.Positive(t, l.MaxFrag, capacity)
			_, size := l.Records(l.MaxMessage)
			require.LessOrEqual(t, size, l.MaxBatch, capacity)
			_, size = l.Records(l.MaxMessage + 1)
			require.Greater(t, size, l.MaxBatch, capacity)
		}
	}
}

// A checksummed record spends mailboxdef.ChecksumLength bytes of its payload on the
// checksum: each fragment is that much shorter, each record's size
// includes it.
func TestLayoutWithChecksum(t *testing.T) {
	l := NewLayout(64*1024, 8192, 0, true)
	require.Equal(t, mailboxdef.ChecksumLength, l.Over)
	require.Equal(t, 8192-mailboxdef.ChecksumLength-HeaderLength, l.MaxFrag)
	count, size := l.Records(1)
	require.Equal(t, 1, count)
	require.Equal(t, record.Size(mailboxdef.ChecksumLength+HeaderLength+1), size)
	count, size = l.Records(l.MaxMessage)
	require.Equal(t, 4, count)
	require.LessOrEqual(t, size, l.MaxBatch)
}

// checksum is the CRC32C of the body from a start that depends on the
// position, the length and the type: any one of them changed, a lap of
// the ring away, or one bit of the body, changes it.
func TestChecksumBindsPositionLengthTypeAndBody(t *testing.T) {
	body := pattern(3, 100)
	const capacity = 1 << 16
	base := checksum(capacity, 116, framedFlag|checkedFlag|7, body)
	length, typeID := uint32(116), uint32(framedFlag|checkedFlag|7)
	require.Equal(t, crc32.Update(uint32(capacity)^length*0x85ebca77^typeID*0xc2b2ae3d,
		crc32.MakeTable(crc32.Castagnoli), body), base)
	for lap := int64(-3); lap <= 3; lap++ {
		if lap != 0 {
			require.NotEqual(t, base, checksum(capacity+lap*capacity, 116, framedFlag|checkedFlag|7, body), "lap %d", lap)
		}
	}
	require.NotEqual(t, base, checksum(capacity+8, 116, framedFlag|checkedFlag|7, body))
	require.NotEqual(t, base, checksum(capacity, 124, framedFlag|checkedFlag|7, body))
	require.NotEqual(t, base, checksum(capacity, 116, framedFlag|checkedFlag|8, body))
	for i := range body {
		flipped := append([]byte(nil), body...)
		flipped[i] ^= 1 << (i % 8)
		require.NotEqual(t, base, checksum(capacity, 116, framedFlag|checkedFlag|7, flipped), "byte %d", i)
	}
}
