package journal

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dutyrt/duty/internal/journalfile"
	"github.com/stretchr/testify/require"
)

func TestAppendReadAcrossSegments(t *testing.T) {
	dir := testDir(t)
	j := openT(t, dir, Options{})
	appendN(t, j, 1, 1000)
	appendN(t, j, 2, 500)
	got := readAll(t, j)
	require.Equal(t, map[uint32]int64{1: 1000, 2: 500}, got)
	st := j.Stats()
	require.Greater(t, st.Segments, 3, "records spread over several segments")
	names, _ := filepath.Glob(filepath.Join(dir, "*.seg"))
	require.Len(t, names, st.Segments)
	require.Equal(t, "00000000000000000000.seg", filepath.Base(names[0]))
	require.Equal(t, "00000000000000065536.seg", filepath.Base(names[1]))
	require.NoError(t, j.Close())

	j2 := openT(t, dir, Options{})
	require.Equal(t, int64(-1), j2.Recovery().TornAt)
	require.Equal(t, int64(1000), j2.nextSequence(1))
	require.Equal(t, int64(500), j2.nextSequence(2))
	appendN(t, j2, 1, 10)
	require.Equal(t, map[uint32]int64{1: 1010, 2: 500}, readAll(t, j2))
}

func TestSecondWriterIsRefused(t *testing.T) {
	dir := testDir(t)
	j := openT(t, dir, Options{})
	_, err := Open(dir, Options{SegmentSize: testSegment})
	require.ErrorIs(t, err, ErrLocked)
	r, err := Open(dir, Options{ReadOnly: true})
	require.NoError(t, err, "readers need no lock")
	require.NoError(t, r.Close())
	require.NoError(t, j.Close())
	j2, err := Open(dir, Options{SegmentSize: testSegment})
	require.NoError(t, err, "the lock goes with Close")
	require.NoError(t, j2.Close())
}

func TestClaimErrors(t *testing.T) {
	j := openT(t, testDir(t), Options{})
	_, err := j.Claim(1, 1, j.MaxBody()+1)
	require.ErrorIs(t, err, ErrArgument)
	_, err = j.Claim(1, 1, -1)
	require.ErrorIs(t, err, ErrArgument)
	require.ErrorIs(t, j.Commit(), ErrClaim)
	require.ErrorIs(t, j.Abort(), ErrClaim)
	c, err := j.Claim(1, 1, j.MaxBody())
	require.NoError(t, err, "the largest body fits in an empty segment")
	_, err = j.Claim(1, 1, 8)
	require.ErrorIs(t, err, ErrClaim)
	copy(c.Body(), "aborted")
	require.NoError(t, j.Abort())
	_, _, err = j.Append(1, 2, []byte("kept"))
	require.NoError(t, err)
	tl, err := j.NewTailer()
	require.NoError(t, err)
	defer tl.Close()
	r, ok, err := tl.Next()
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "kept", string(r.Body))
	require.Equal(t, int64(0), r.Sequence, "an aborted claim takes no sequence number")
	require.Equal(t, int32(2), r.TypeID)
	_, ok, err = tl.Next()
	require.NoError(t, err)
	require.False(t, ok)
}

func TestSegmentSizeIsFixedAtCreation(t *testing.T) {
	dir := testDir(t)
	j := openT(t, dir, Options{SegmentSize: 128 << 10})
	require.NoError(t, j.Close())
	_, err := Open(dir, Options{SegmentSize: 64 << 10})
	require.ErrorIs(t, err, ErrArgument)
	j2 := openT(t, dir, Options{SegmentSize: 128 << 10})
	require.Equal(t, int64(128<<10), j2.segmentSize())
	_, err = Open(testDir(t), Options{SegmentSize: 100000})
	require.ErrorIs(t, err, ErrArgument)
	_, err = Open(filepath.Join(testDir(t), "none"), Options{ReadOnly: true})
	require.Error(t, err)
}

func TestReadOnlyOnlyReads(t *testing.T) {
	dir := testDir(t)
	j := openT(t, dir, Options{})
	r := openT(t, dir, Options{ReadOnly: true})
	_, err := r.Claim(1, 1, 1)
	require.ErrorIs(t, err, ErrReadOnly)
	require.ErrorIs(t, r.Flush(), ErrReadOnly)
	_, err = r.ApplyRetention()
	require.ErrorIs(t, err, ErrReadOnly)
	appendN(t, j, 3, 800) // several segments, created after the reader opened
	require.Equal(t, map[uint32]int64{3: 800}, readAll(t, r))
	_, err = os.Stat(filepath.Join(dir, journalfile.LockName))
	require.NoError(t, err)
}

// Commit continues each record's CRC from its stream's shared header
// words, kept for the last type and flags: records that change type or
// flags from one commit to the next, on one stream and on two, plain and
// multipart, through every way of appending, and a reopened writer's,
// all carry the CRC of their own bytes (a read-only reader verifies each).
func TestRecordCRCFollowsTypeAndFlags(t *testing.T) {
	dir := testDir(t)
	type rec struct {
		stream uint32
		typeID int32
		flags  uint32
	}
	var want []rec
	body := []byte("0123456789abcdef0123456789abcdef")
	add := func(j *Journal, stream uint32, typeID int32, how int) {
		var err error
		flags := uint32(0)
		switch how {
		case 0:
			_, _, err = j.Append(stream, typeID, body)
		case 1:
			s, serr := j.Stream(stream)
			require.NoError(t, serr)
			_, _, err = s.AppendParts(typeID, body[:5], body[5:])
			flags = journalfile.RecordParts
		case 2:
			c, cerr := j.Claim(stream, typeID, len(body))
			require.NoError(t, cerr)
			copy(c.Body(), body)
			err = j.Commit()
		}
		require.NoError(t, err)
		want = append(want, rec{stream, typeID, flags})
	}
	j := openT(t, dir, Options{})
	for i, ty := range []int32{1, 1, 2, 2, 1, 3, 3, 3, -7, 1} {
		add(j, 1, ty, i%3)
		add(j, 2, ty+1, (i+1)%3)
		add(j, 1, ty, (i+2)%3)
	}
	require.NoError(t, j.Close())
	j = openT(t, dir, Options{})
	add(j, 1, 1, 1)
	add(j, 1, 1, 0)
	require.NoError(t, j.Close())

	r := openT(t, dir, Options{ReadOnly: true})
	tl, err := r.NewTailer()
	require.NoError(t, err)
	defer tl.Close()
	var got []rec
	for {
		rc, ok, err := tl.Next()
		require.NoError(t, err)
		if !ok {
			break
		}
		got = append(got, rec{rc.StreamID, rc.TypeID, rc.Flags})
	}
	require.Equal(t, want, got)
}
