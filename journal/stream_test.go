package journal

import (
	"reflect"
	"unsafe"

	"testing"

	"github.com/stretchr/testify/require"
)

// A Stream handle continues the stream's sequence wherever it was
// appended to (by id or by handle, before a reopen), and ClaimAt stamps
// the timestamp given.
func TestStreamHandle(t *testing.T) {
	dir := testDir(t)
	j := openT(t, dir, Options{Clock: func() int64 { return 7 }})
	_, _, err := j.Append(5, 1, []byte("a"))
	require.NoError(t, err)
	s, err := j.Stream(5)
	require.NoError(t, err)
	s2, err := j.Stream(5)
	require.NoError(t, err)
	require.Same(t, s, s2)
	require.Equal(t, uint32(5), s.streamID())
	require.Equal(t, int64(1), s.NextSequence())
	c, err := s.ClaimAt(2, 3, 1234)
	require.NoError(t, err)
	require.Equal(t, int64(1), c.Sequence)
	copy(c.Body(), "bcd")
	require.NoError(t, j.Commit())
	_, seq, err := s.Append(3, []byte("e"))
	require.NoError(t, err)
	require.Equal(t, int64(2), seq)
	_, seq, err = j.Append(5, 3, []byte("f"))
	require.NoError(t, err)
	require.Equal(t, int64(3), seq)
	require.Equal(t, int64(4), s.NextSequence())
	_, err = s.Claim(1, j.MaxBody()+1)
	require.ErrorIs(t, err, ErrArgument)

	tl, err := j.NewTailer()
	require.NoError(t, err)
	var got []RecordHeader
	for {
		r, ok, err := tl.Next()
		require.NoError(t, err)
		if !ok {
			break
		}
		got = append(got, r.RecordHeader)
	}
	require.NoError(t, tl.Close())
	require.Len(t, got, 4)
	require.Equal(t, []int64{7, 1234, 7, 7}, []int64{got[0].Timestamp, got[1].Timestamp, got[2].Timestamp, got[3].Timestamp})

	require.NoError(t, j.Close())
	j = openT(t, dir, Options{})
	s, err = j.Stream(5)
	require.NoError(t, err)
	require.Equal(t, int64(4), s.NextSequence(), "a reopened writer continues the stream")
	_, err = s.ClaimAt(1, 1, 1)
	require.NoError(t, err)
	require.NoError(t, j.Close())
	_, err = s.ClaimAt(1, 1, 1)
	require.ErrorIs(t, err, ErrClosed)

	r := openT(t, dir, Options{ReadOnly: true})
	_, err = r.Stream(5)
	require.ErrorIs(t, err, ErrReadOnly)
}

// The compiler keeps a result in registers only if it is a struct of at
// most four fields and four words (its SSA rule): a larger Claim goes
// through the stack on every record (Claim's doc).
func TestClaimFitsInRegisters(t *testing.T) {
	typ := reflect.TypeFor[Claim]()
	require.LessOrEqual(t, typ.NumField(), 4, "fields of Claim")
	require.LessOrEqual(t, typ.Size(), 4*unsafe.Sizeof(uintptr(0)), "size of Claim")
}
