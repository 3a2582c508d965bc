package ipcfile

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// A header Layout computes and Write stores reads back as it was, and a
// field no creator writes is refused with the sentinel that says why.
func TestHeaderRoundTripAndChecks(t *testing.T) {
	h, err := Layout(3, []int{100, 5000})
	require.NoError(t, err)
	require.Equal(t, []Section{{HeaderLength, 100}, {2 * SectionAlignment, 5000}}, h.Sections)
	require.Equal(t, int64(4*SectionAlignment), h.FileLength)
	h.OwnerPID, h.OwnerStartTime, h.Created, h.LivenessTimeout = 42, 7, 1000, 10_000
	b := make([]byte, HeaderLength)
	require.True(t, Uninitialised(b))
	Write(b, h)
	require.False(t, Uninitialised(b))
	got, err := Read("f", b, h.FileLength)
	require.NoError(t, err)
	require.Equal(t, h, got)
	require.Equal(t, int64(1000), int64(binary.LittleEndian.Uint64(b[HeartbeatOffset:])), "the heartbeat starts at the creation time")

	_, err = Read("f", b, h.FileLength-1)
	require.ErrorIs(t, err, ErrTruncated)
	for _, c := range []struct {
		name   string
		offset int
		value  uint32
		want   error
	}{
		{"magic", MagicOffset, 1, ErrNotDutyFile},
		{"version 0", VersionOffset, 0, ErrNotReady},
		{"newer version", VersionOffset, uint32(LayoutVersion + 1), ErrVersion},
		{"kind 0", KindOffset, 0, ErrCorrupt},
		{"header length", HeaderLengthOffset, 1, ErrCorrupt},
		{"no section", SectionCountOffset, 0, ErrCorrupt},
		{"alignment", SectionAlignmentOffset, 8, ErrCorrupt},
		{"section overlap", SectionEntry(1) + SectionOffsetField, HeaderLength, ErrCorrupt},
	} {
		bad := append([]byte(nil), b...)
		binary.LittleEndian.PutUint32(bad[c.offset:], c.value)
		_, err := Read("f", bad, h.FileLength)
		require.ErrorIs(t, err, c.want, c.name)
	}
	var ve *VersionError
	binary.LittleEndian.PutUint32(b[VersionOffset:], uint32(LayoutVersion+1))
	_, err = Read("f", b, h.FileLength)
	require.True(t, errors.As(err, &ve))
	require.Equal(t, LayoutVersion+1, ve.Found)

	_, err = Layout(1, nil)
	require.ErrorIs(t, err, ErrArgument)
	_, err = Layout(1, []int{0})
	require.ErrorIs(t, err, ErrArgument)
}
