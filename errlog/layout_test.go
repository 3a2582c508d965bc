package errlog

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The constants of Agrona's error log layout (docs/agrona.md, "Distinct
// error log"; docs/layouts.md), written out again as literals so that a
// change to layout.go breaks this test.
func TestLayoutConstantsMatchAgrona(t *testing.T) {
	require.Equal(t, 8, recordAlignment)
	require.Equal(t, 0, lengthOffset)
	require.Equal(t, 4, observationCountOffset)
	require.Equal(t, 8, lastObservationTimestampOffset)
	require.Equal(t, 16, firstObservationTimestampOffset)
	require.Equal(t, 24, encodedErrorOffset)
	require.Equal(t, 24, headerLength)
	require.Equal(t, 1<<31-1, maxRecordLength)
	for _, c := range []struct{ in, want int }{{24, 24}, {25, 32}, {31, 32}, {32, 32}, {maxRecordLength, 1 << 31}} {
		require.Equal(t, c.want, alignRecord(c.in), c.in)
	}
}

// Raw bytes written by a Log, checked at the documented offsets with plain
// little-endian decoding (not through the package's accessors).
func TestLayoutRawBytes(t *testing.T) {
	clock := newClock(1_700_000_000_123)
	buf := newBuf(4096)
	l := mustLog(t, buf, WithClock(clock))
	var len0, next int
	var text0 string
	first := func() {
		len0 = int(le32(buf, 0))
		text0 = string(buf[24:len0])
		require.True(t, strings.HasPrefix(text0, "*errors.errorString: boom\n\tat "), text0)
		require.Equal(t, int32(1), le32(buf, 4), "count")
		require.Equal(t, int64(1_700_000_000_123), le64(buf, 8), "last")
		require.Equal(t, int64(1_700_000_000_123), le64(buf, 16), "first")
		next = (len0 + 7) &^ 7
		require.Zero(t, le32(buf, next), "the log ends after the first record")
	}
	require.Equal(t, []bool{true, true, true}, recordAll(l, clock,
		step{1_700_000_000_123, errors.New("boom"), first},
		step{1_700_000_000_500, errors.New("bang"), nil},
		step{1_700_000_000_900, errors.New("boom"), nil})) // a new value, the same observation
	len1 := int(le32(buf, next))
	require.True(t, strings.HasPrefix(string(buf[next+24:next+len1]), "*errors.errorString: bang\n"))
	require.Equal(t, int32(1), le32(buf, next+4))
	require.Equal(t, int64(1_700_000_000_500), le64(buf, next+16))
	require.Equal(t, int64(1_700_000_000_500), le64(buf, next+8))
	require.Zero(t, next%8)

	require.Equal(t, int32(len0), le32(buf, 0), "length unchanged")
	require.Equal(t, int32(2), le32(buf, 4), "count")
	require.Equal(t, int64(1_700_000_000_900), le64(buf, 8), "last")
	require.Equal(t, int64(1_700_000_000_123), le64(buf, 16), "first unchanged")
	require.Equal(t, text0, string(buf[24:len0]), "text of the first observation kept")
	end := next + (len1+7)&^7
	require.Zero(t, le32(buf, end))
	for _, c := range buf[end:] {
		require.Zero(t, c, "nothing written after the log")
	}
}
