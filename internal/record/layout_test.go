package record

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// The layout helpers write what the layout says: a header word puts the
// length at LengthOffset and the type at TypeOffset (little-endian), a
// marker is the negated record length with the type, and Size is the
// header plus the payload rounded up to the alignment.
func TestLayoutHelpers(t *testing.T) {
	var word [8]byte
	for n := 0; n <= 4*MaxPayload; n++ {
		require.Equal(t, (n+HeaderLength+7)/8*8, Size(n), "record size of %d", n)
		require.Zero(t, Size(n)%Alignment)
		for _, typeID := range []int32{1, 7, PaddingTypeID, MaxTypeID | FlagFramed, math.MaxInt32} {
			binary.LittleEndian.PutUint64(word[:], uint64(HeaderWord(n+HeaderLength, typeID)))
			require.Equal(t, int32(n+HeaderLength), int32(binary.LittleEndian.Uint32(word[LengthOffset:])), "length of %d", n)
			require.Equal(t, typeID, int32(binary.LittleEndian.Uint32(word[TypeOffset:])), "type %d", typeID)
			binary.LittleEndian.PutUint64(word[:], uint64(Marker(n, typeID)))
			require.Equal(t, -int32(n+HeaderLength), int32(binary.LittleEndian.Uint32(word[LengthOffset:])), "marker of %d", n)
			require.Equal(t, typeID, int32(binary.LittleEndian.Uint32(word[TypeOffset:])), "marker type %d", typeID)
		}
	}
	require.Equal(t, 0, Align(0))
	require.Equal(t, 8, Align(1))
	require.Equal(t, 8, Align(8))
	require.Equal(t, 16, Align(9))
}

// The type-id scheme, bit by bit (docs/mailbox.md, docs/publication.md).
func TestTypeIDBits(t *testing.T) {
	require.Equal(t, int32(0x00ffffff), MaxTypeID)
	require.Equal(t, int32(0x40000000), FlagFramed)
	require.Equal(t, int32(0x20000000), FlagBegin)
	require.Equal(t, int32(0x10000000), FlagEnd)
	require.Equal(t, int32(0x08000000), FlagChecked)
	require.Equal(t, int32(0x07000000), FlagsReserved)
	require.Equal(t, int32(0x7f000000), FlagBits)
	require.Zero(t, FlagBits&MaxTypeID, "no flag bit is a user type bit")
	require.Equal(t, int32(math.MaxInt32), FlagBits|MaxTypeID, "every bit but the sign is one or the other")
}
