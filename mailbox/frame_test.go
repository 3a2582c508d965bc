package mailbox

import (
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/dutyrt/duty/ringbuf"
	"github.com/stretchr/testify/require"
)

// The framing constants, as docs/mailbox.md states them.
func TestFrameConstants(t *testing.T) {
	require.Equal(t, int32(0x00ffffff), MaxTypeID)
	require.Equal(t, int32(0x40000000), framedFlag)
	require.Equal(t, 32, frameHeaderLength)
	require.Equal(t, 0, frameKeyOffset)
	require.Equal(t, 8, frameSequenceOffset)
	require.Equal(t, 16, frameIndexOffset)
	require.Equal(t, 20, frameCountOffset)
	require.Equal(t, 24, frameBodyLengthOffset)
	require.Equal(t, 28, framePartsOffset)
	require.Equal(t, 4, partLengthPrefix)
}

func TestFrameHeaderRoundTrip(t *testing.T) {
	h := frameHeader{key: -2, seq: 0x0102030405060708, index: 3, count: 4, bodyLen: 5000, parts: 7}
	b := make([]byte, frameHeaderLength)
	putFrameHeader(b, &h)
	require.Equal(t, uint64(0xfffffffffffffffe), binary.LittleEndian.Uint64(b[0:]))
	require.Equal(t, uint64(0x0102030405060708), binary.LittleEndian.Uint64(b[8:]))
	require.Equal(t, uint32(3), binary.LittleEndian.Uint32(b[16:]))
	require.Equal(t, uint32(4), binary.LittleEndian.Uint32(b[20:]))
	require.Equal(t, uint32(5000), binary.LittleEndian.Uint32(b[24:]))
	require.Equal(t, uint32(7), binary.LittleEndian.Uint32(b[28:]))
	var g frameHeader
	readFrameHeader(b, &g)
	require.Equal(t, h, g)
}

func TestClassify(t *testing.T) {
	for _, c := range []struct {
		rec   int32
		class recordClass
		user  int32
	}{
		{1, classPlain, 1},
		{MaxTypeID, classPlain, MaxTypeID},
		{MaxTypeID + 1, classInvalid, 0},
		{framedFlag | 1, classFramed, 1},
		{framedFlag | MaxTypeID, classFramed, MaxTypeID},
		{framedFlag, classInvalid, 0},             // no user type
		{framedFlag | 1<<24 | 5, classInvalid, 0}, // other reserved bit
		{1<<29 | 5, classInvalid, 0},              // reserved bit without the flag
		{0x7fffffff, classInvalid, 0},
	} {
		class, user := classify(c.rec)
		require.Equal(t, c.class, class, "type %#x", c.rec)
		require.Equal(t, c.user, user, "type %#x", c.rec)
	}
}

// The geometry of a 64 KiB ring: records of 8 KiB, batches of half the
// ring, and the largest message fills a batch exactly.
func TestLayout64K(t *testing.T) {
	l := newLayout(64*1024, 8192, 0, false)
	require.Equal(t, 8192, l.maxRecord)
	require.Equal(t, 8160, l.maxFrag)
	require.Equal(t, 32768, l.maxBatch)
	require.Equal(t, 3*8160+8128, l.maxMessage)
	require.Equal(t, 4, l.maxRecords)
	count, size := l.records(l.maxMessage)
	require.Equal(t, 4, count)
	require.Equal(t, 32768, size)
	count, size = l.records(1)
	require.Equal(t, 1, count)
	require.Equal(t, ringbuf.RecordSize(frameHeaderLength+1), size)
	count, _ = l.records(8160)
	require.Equal(t, 1, count)
	count, _ = l.records(8161)
	require.Equal(t, 2, count)

	small := newLayout(64*1024, 8192, 1000, false)
	require.Equal(t, 1000, small.maxMessage)
	require.Equal(t, 1, small.maxRecords)
}

// Every capacity from the minimum up has a usable geometry whose largest
// message fits its batch limit, with checksummed records or without.
func TestLayoutCapacities(t *testing.T) {
	for _, checksum := range []bool{false, true} {
		for capacity := minCapacity; capacity <= 1<<26; capacity <<= 1 {
			l := newLayout(capacity, max(8, capacity/8), 0, checksum)
			require.Positive(t, l.maxFrag, capacity)
			_, size := l.records(l.maxMessage)
			require.LessOrEqual(t, size, l.maxBatch, capacity)
			_, size = l.records(l.maxMessage + 1)
			require.Greater(t, size, l.maxBatch, capacity)
		}
	}
}

// A checksummed record spends checksumLength bytes of its payload on the
// checksum: each fragment is that much shorter, each record's size
// includes it.
func TestLayoutWithChecksum(t *testing.T) {
	l := newLayout(64*1024, 8192, 0, true)
	require.Equal(t, checksumLength, l.over)
	require.Equal(t, 8192-checksumLength-frameHeaderLength, l.maxFrag)
	count, size := l.records(1)
	require.Equal(t, 1, count)
	require.Equal(t, ringbuf.RecordSize(checksumLength+frameHeaderLength+1), size)
	count, size = l.records(l.maxMessage)
	require.Equal(t, 4, count)
	require.LessOrEqual(t, size, l.maxBatch)
}

// Sender keys are never 0, which SenderKey reports for a plain message:
// not the first Sender's of a fresh ring, nor the Mailbox's own per-message
// keys.
func TestSenderKeysAreNeverZero(t *testing.T) {
	mb := newMailbox(t, Config{})
	require.Zero(t, RingOf(mb).NextCorrelationID(), "a fresh ring's counter starts at 0")
	mb = newMailbox(t, Config{})
	s := mb.NewSender()
	require.NotZero(t, s.key)
	require.NoError(t, s.SendParts(1, []byte("a"), []byte("a")))
	require.NoError(t, mb.SendParts(2, []byte("b"), []byte("b")))
	require.NoError(t, mb.Send(3, []byte("plain")))
	var keys []int64
	_, err := mb.Drain(func(m *Message) Action {
		keys = append(keys, m.key)
		return Continue
	}, 10)
	require.NoError(t, err)
	require.Len(t, keys, 3)
	require.Equal(t, s.key, keys[0])
	require.NotZero(t, keys[1])
	require.NotEqual(t, keys[0], keys[1])
	require.Zero(t, keys[2], "a plain message")
}

// The raw bytes a multipart message puts in the ring: one record of type
// framedFlag|type, the frame header, then length-prefixed parts.
func TestFrameRawBytes(t *testing.T) {
	mb := newMailbox(t, Config{Capacity: minCapacity})
	s := mb.NewSender()
	require.NoError(t, s.SendParts(9, []byte("ab"), []byte(""), []byte("cde")))
	buf := RingOf(mb).Buffer()
	body := 3*partLengthPrefix + 5
	require.Equal(t, int32(ringbuf.HeaderLength+frameHeaderLength+body), int32(binary.LittleEndian.Uint32(buf[0:])))
	require.Equal(t, framedFlag|9, int32(binary.LittleEndian.Uint32(buf[4:])))
	p := buf[ringbuf.HeaderLength:]
	require.Equal(t, s.key, int64(binary.LittleEndian.Uint64(p[frameKeyOffset:])))
	require.Equal(t, uint64(0), binary.LittleEndian.Uint64(p[frameSequenceOffset:]))
	require.Equal(t, uint32(0), binary.LittleEndian.Uint32(p[frameIndexOffset:]))
	require.Equal(t, uint32(1), binary.LittleEndian.Uint32(p[frameCountOffset:]))
	require.Equal(t, uint32(body), binary.LittleEndian.Uint32(p[frameBodyLengthOffset:]))
	require.Equal(t, uint32(3), binary.LittleEndian.Uint32(p[framePartsOffset:]))
	b := p[frameHeaderLength:]
	require.Equal(t, []byte{2, 0, 0, 0, 'a', 'b', 0, 0, 0, 0, 3, 0, 0, 0, 'c', 'd', 'e'}, b[:body])

	// A plain message is an Agrona record: user type, raw payload.
	mb2 := newMailbox(t, Config{Capacity: minCapacity})
	require.NoError(t, mb2.Send(5, []byte("xyz")))
	buf = RingOf(mb2).Buffer()
	require.Equal(t, int32(11), int32(binary.LittleEndian.Uint32(buf[0:])))
	require.Equal(t, int32(5), int32(binary.LittleEndian.Uint32(buf[4:])))
	require.Equal(t, "xyz", string(buf[8:11]))
}

// A fragmented message: records of maxFrag body bytes and a shorter last
// one, all of one batch, with consecutive indexes.
func TestFrameFragmentsRaw(t *testing.T) {
	mb := newMailbox(t, Config{Capacity: 4096}) // records of 512 bytes, 480 of body
	require.Equal(t, 512, mb.MaxClaimLength())
	payload := pattern(1, 1000)
	s := mb.NewSender()
	require.NoError(t, s.Send(3, payload))
	buf := RingOf(mb).Buffer()
	at := 0
	var body []byte
	for i := range 3 {
		length := int(binary.LittleEndian.Uint32(buf[at:]))
		require.Equal(t, framedFlag|3, int32(binary.LittleEndian.Uint32(buf[at+4:])))
		var h frameHeader
		readFrameHeader(buf[at+8:], &h)
		require.Equal(t, frameHeader{key: s.key, seq: 0, index: uint32(i), count: 3, bodyLen: 1000, parts: 1}, h)
		body = append(body, buf[at+8+frameHeaderLength:at+length]...)
		at += ringbuf.RecordSize(length - 8)
	}
	require.Equal(t, payload, body)
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
