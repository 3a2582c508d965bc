package ringbuf

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/record"
)

// The offsets of Agrona's ring layout (docs/agrona.md, "Layout"), written out independently of
// layout.go.
func TestLayoutConstantsMatchAgrona(t *testing.T) {
	require.Equal(t, 768, TrailerLength)
	require.Equal(t, 128, tailPositionOffset)
	require.Equal(t, 256, headCachePositionOffset)
	require.Equal(t, 384, headPositionOffset)
	require.Equal(t, 512, correlationCounterOffset)
	require.Equal(t, 640, consumerHeartbeatOffset)
	require.Equal(t, 8, HeaderLength)
	require.Equal(t, 8, recordAlignment)
	require.Equal(t, 0, lengthOffset)
	require.Equal(t, 4, typeOffset)
	require.Equal(t, int32(-1), paddingTypeID)
	require.Equal(t, 16, minCapacityOneToOne)
	require.Equal(t, 8, minCapacityManyToOne)
}

func TestMaxMessageLengthFollowsAgrona(t *testing.T) {
	cases := []struct{ capacity, min, want int }{
		{16, 8, 8}, {64, 8, 8}, {256, 16, 32}, {1024, 8, 128}, {65536, 8, 8192},
		{8, 8, 0}, {16, 16, 0},
	}
	for _, c := range cases {
		require.Equal(t, c.want, record.MaxMessageLength(c.capacity, c.min), "%+v", c)
	}
}

func le32(b []byte, i int) int32 { return int32(binary.LittleEndian.Uint32(b[i:])) }
func le64(b []byte, i int) int64 { return int64(binary.LittleEndian.Uint64(b[i:])) }

func TestRawBytesManyToOne(t *testing.T) {
	const capacity = 256
	buf, err := Allocate(capacity)
	require.NoError(t, err)
	r, err := NewManyToOne(buf)
	require.NoError(t, err)

	require.NoError(t, r.Write(7, []byte("hello")))
	require.NoError(t, r.Write(9, []byte("0123456789abcdef")))
	require.Equal(t, int32(13), le32(buf, 0), "length word: header + payload, unaligned")
	require.Equal(t, int32(7), le32(buf, 4))
	require.Equal(t, "hello", string(buf[8:13]))
	require.Equal(t, int32(24), le32(buf, 16), "second record starts at align(13, 8)")
	require.Equal(t, int32(9), le32(buf, 20))
	require.Equal(t, "0123456789abcdef", string(buf[24:40]))
	require.Equal(t, int64(40), le64(buf, capacity+128), "tail")
	require.Equal(t, int64(0), le64(buf, capacity+384), "head")

	id := r.NextCorrelationID()
	require.Equal(t, int64(0), id)
	require.Equal(t, int64(1), le64(buf, capacity+512), "correlation counter")
	r.SetConsumerHeartbeatTime(1234567)
	require.Equal(t, int64(1234567), le64(buf, capacity+640), "heartbeat")

	n, err := r.Read(func(int32, []byte) {}, NoLimit)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.Equal(t, int64(40), le64(buf, capacity+384), "head after read")
	require.Equal(t, make([]byte, 40), buf[:40], "many-to-one zeroes consumed space")

	// Fill to the exact end of the ring (no padding), then wrap.
	for i := 0; i < 5; i++ {
		require.NoError(t, r.Write(1, make([]byte, 24))) // 32 bytes each: 40..200
	}
	require.NoError(t, r.Write(1, make([]byte, 24))) // 200..232
	require.NoError(t, r.Write(1, make([]byte, 16))) // 24 bytes: 232..256, exact fit
	require.Equal(t, int64(capacity), le64(buf, capacity+128))
	_, err = r.Read(func(int32, []byte) {}, NoLimit)
	require.NoError(t, err)
	require.NoError(t, r.Write(1, nil)) // header only: 0..8
	for i := 0; i < 7; i++ {
		require.NoError(t, r.Write(1, make([]byte, 24))) // 8..232
	}
	require.NoError(t, r.Write(1, make([]byte, 8))) // 16 bytes: 232..248, 8 left
	n, err = r.Read(func(int32, []byte) {}, 1)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	// 16 bytes are free in all, but a 16-byte record fits neither in the last
	// 8 bytes nor before head (index 8): pad the 8 bytes and report full.
	require.ErrorIs(t, r.Write(3, make([]byte, 8)), ErrFull)
	require.Equal(t, int32(8), le32(buf, 248), "padding length")
	require.Equal(t, int32(-1), le32(buf, 252), "padding type")
	require.Equal(t, int64(2*capacity), le64(buf, capacity+128), "tail moved over the padding only")
	n, err = r.Read(func(int32, []byte) {}, NoLimit)
	require.NoError(t, err)
	require.Equal(t, 8, n, "padding is consumed, not counted")
	require.NoError(t, r.Write(3, make([]byte, 8)))
	require.Equal(t, int32(16), le32(buf, 0))
	require.Equal(t, int32(3), le32(buf, 4))
}

func TestRawBytesOneToOnePreZeroesNextHeader(t *testing.T) {
	const capacity = 64
	buf, err := Allocate(capacity)
	require.NoError(t, err)
	for i := range buf[:capacity] {
		buf[i] = 0xAA // stale data from an earlier lap
	}
	r, err := NewOneToOne(buf)
	require.NoError(t, err)
	require.NoError(t, r.Write(5, []byte{1, 2, 3, 4}))
	require.Equal(t, int32(12), le32(buf, 0))
	require.Equal(t, int32(5), le32(buf, 4))
	require.Equal(t, int64(0), le64(buf, 16), "the header after the record is zeroed before publication")
	require.Equal(t, int64(16), le64(buf, capacity+128))
	n, err := r.Read(func(int32, []byte) {}, NoLimit)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, int32(12), le32(buf, 0), "one-to-one leaves consumed space dirty")
	require.Equal(t, int64(16), le64(buf, capacity+384))
}
