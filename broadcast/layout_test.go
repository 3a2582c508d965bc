package broadcast

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"
)

// The offsets and constants of Agrona's broadcast layout (docs/agrona.md,
// "Broadcast"; docs/layouts.md), written out again as literals so that a
// change to layout.go breaks this test.
func TestLayoutConstantsMatchAgrona(t *testing.T) {
	require.Equal(t, 128, trailerLength)
	require.Equal(t, 0, tailIntentCounterOffset)
	require.Equal(t, 8, tailCounterOffset)
	require.Equal(t, 16, latestCounterOffset)
	require.Equal(t, 8, headerLength)
	require.Equal(t, 0, lengthOffset)
	require.Equal(t, 4, typeOffset)
	require.Equal(t, 8, recordAlignment)
	require.Equal(t, -1, paddingTypeID)
	require.Equal(t, 128, maxMsgLength(1024))
	require.Equal(t, 8192, maxMsgLength(64*1024))
}

func le32(b []byte, off int) int32 { return int32(binary.LittleEndian.Uint32(b[off:])) }
func le64(b []byte, off int) int64 { return int64(binary.LittleEndian.Uint64(b[off:])) }

type trailer struct{ intent, tail, latest int64 }

func readTrailer(b []byte, capacity int) trailer {
	return trailer{
		intent: le64(b, capacity+0),
		tail:   le64(b, capacity+8),
		latest: le64(b, capacity+16),
	}
}

// Raw bytes written by the transmitter, checked at the documented offsets
// with plain little-endian decoding (not through the package's accessors).
func TestLayoutRawBytes(t *testing.T) {
	const capacity = 64 // max payload 8 bytes, records of 8 or 16 bytes
	b := newBuf(t, capacity)
	require.Len(t, b, capacity+128)
	tx := newTx(t, b)

	require.NoError(t, tx.Transmit(7, []byte("abc")))
	require.Equal(t, int32(11), le32(b, 0), "length: header + payload, unaligned")
	require.Equal(t, int32(7), le32(b, 4))
	require.Equal(t, "abc", string(b[8:11]))
	require.Equal(t, trailer{16, 16, 0}, readTrailer(b, capacity))

	require.NoError(t, tx.Transmit(2, nil))
	require.Equal(t, int32(8), le32(b, 16), "empty payload: header only")
	require.Equal(t, int32(2), le32(b, 20))
	require.Equal(t, trailer{24, 24, 16}, readTrailer(b, capacity))

	require.NoError(t, tx.Transmit(3, []byte("12345678")))
	require.NoError(t, tx.Transmit(3, []byte("abcdefgh")))
	require.Equal(t, int32(16), le32(b, 24))
	require.Equal(t, int32(16), le32(b, 40))
	require.Equal(t, "abcdefgh", string(b[48:56]))
	require.Equal(t, trailer{56, 56, 40}, readTrailer(b, capacity))

	// 8 bytes left at the end: a header-only padding record, then the
	// message at offset 0 of the next lap.
	require.NoError(t, tx.Transmit(9, []byte("XYZ")))
	require.Equal(t, int32(8), le32(b, 56), "padding length = bytes to the end")
	require.Equal(t, int32(-1), le32(b, 60), "padding type")
	require.Equal(t, int32(11), le32(b, 0))
	require.Equal(t, int32(9), le32(b, 4))
	require.Equal(t, "XYZ", string(b[8:11]))
	require.Equal(t, trailer{80, 80, 64}, readTrailer(b, capacity))
	require.Equal(t, []byte{0xff, 0xff, 0xff, 0xff}, b[60:64], "little-endian -1")
}

// writePayload and readPayload round-trip every length, in whichever build
// (plain copy, or atomic words under -race and off amd64). The atomic copy
// writes the record's alignment slack, and nothing outside the record.
func TestPayloadCopy(t *testing.T) {
	const capacity = 256
	for n := 0; n <= maxMsgLength(capacity); n++ {
		b := newBuf(t, capacity)
		for i := range capacity {
			b[i] = 0xee
		}
		v, err := newView(b)
		require.NoError(t, err)
		src := msgPayload(make([]byte, n), uint64(n), n)
		writePayload(&v, 8, src)
		dst := make([]byte, n)
		readPayload(dst, &v, 8)
		require.Equal(t, src, dst, "n=%d", n)
		end := 8 + int(align(int64(n)))
		for i := 8 + n; i < end; i++ {
			if atomicPayload {
				require.Zero(t, b[i], "slack byte %d, n=%d", i, n)
			} else {
				require.Equal(t, byte(0xee), b[i])
			}
		}
		require.Equal(t, byte(0xee), b[7])
		require.Equal(t, byte(0xee), b[end], "n=%d", n)
	}
}
