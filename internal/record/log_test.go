package record

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/atomicbuf"
)

// Payload and IndexOf are inverses at every record of a log, and IndexOf
// refuses every slice that is not a payload at a record boundary within
// the log: misaligned, outside it on either side, running past its end,
// in another log.
func TestLogIndexOf(t *testing.T) {
	const capacity = 256
	buf := atomicbuf.Make(capacity + 64).Bytes() // room past the log, as a ring's trailer
	l := NewLog(buf[:capacity])
	require.Equal(t, capacity, l.Capacity())
	require.Equal(t, int64(capacity-1), l.Mask())
	for index := 0; index <= capacity-HeaderLength; index += Alignment {
		rest := capacity - index - HeaderLength
		for _, n := range []int{0, min(1, rest), rest} {
			p := l.Payload(index, n)
			require.Len(t, p, n)
			require.Equal(t, unsafe.Pointer(&buf[index+HeaderLength]), unsafe.Pointer(unsafe.SliceData(p)))
			got, ok := l.IndexOf(p)
			require.True(t, ok, "index %d, %d bytes", index, n)
			require.Equal(t, index, got)
		}
	}

	refused := map[string][]byte{
		"the first header itself":         buf[0:8],
		"inside a header":                 buf[4:12],
		"misaligned":                      buf[9:16],
		"one past a header":               buf[17:20],
		"past the end of the log":         buf[capacity-8 : capacity+8],
		"one byte past the end":           buf[16 : capacity+1],
		"starting past the end":           buf[capacity+8 : capacity+16],
		"the trailer":                     buf[capacity+16 : capacity+24],
		"a heap slice":                    make([]byte, 8),
		"nil":                             nil,
		"in another log of the same size": atomicbuf.Make(capacity).Bytes()[8:16],
	}
	for name, p := range refused {
		_, ok := l.IndexOf(p)
		require.False(t, ok, name)
	}
	// A slice that starts just below the log (its offset wraps): the log
	// is carved out of a larger buffer here.
	inner := NewLog(buf[64 : 64+128])
	_, ok := inner.IndexOf(buf[56:60])
	require.False(t, ok, "below the log")
	at, ok := inner.IndexOf(buf[64+8 : 64+16])
	require.True(t, ok)
	require.Zero(t, at)
}

// The header accessors address the record's words, Bytes the whole log.
func TestLogWords(t *testing.T) {
	buf := atomicbuf.Make(64).Bytes()
	l := NewLog(buf)
	l.WordAt(16).Store(HeaderWord(13, 7))
	require.Equal(t, int32(13), l.LengthAt(16).Load())
	require.Equal(t, int32(7), *l.TypeAt(16))
	require.Equal(t, []byte{13, 0, 0, 0, 7, 0, 0, 0}, buf[16:24])
	require.Equal(t, unsafe.Pointer(&buf[24]), l.At(24))
	require.Len(t, l.Bytes(), 64)
	require.Equal(t, unsafe.Pointer(&buf[0]), unsafe.Pointer(unsafe.SliceData(l.Bytes())))
}
