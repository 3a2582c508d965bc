package journal

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dutyrt/duty/internal/journalfile"
	"github.com/stretchr/testify/require"
)

func TestTailerSeeks(t *testing.T) {
	now := int64(1000)
	j := openT(t, testDir(t), Options{Clock: func() int64 { now++; return now }})
	for i := range 900 {
		appendN(t, j, uint32(1+i%3), 1)
	}
	tl, err := j.NewTailer()
	require.NoError(t, err)
	defer tl.Close()

	// From a stream sequence.
	require.NoError(t, tl.SeekSequence(2, 250))
	r, ok, err := tl.Next()
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, uint32(2), r.StreamID)
	require.Equal(t, int64(250), r.Sequence)
	require.ErrorIs(t, tl.SeekSequence(2, 300), ErrNotFound)

	// From a position (one in a later segment than the first).
	at := r.Position
	require.Greater(t, at, int64(testSegment))
	require.NoError(t, tl.SeekStart())
	require.NoError(t, tl.SeekPosition(at))
	r2, _, err := tl.Next()
	require.NoError(t, err)
	require.Equal(t, r.RecordHeader, r2.RecordHeader)
	require.ErrorIs(t, tl.SeekPosition(at+8), ErrArgument, "inside a record")
	require.ErrorIs(t, tl.SeekPosition(at+3), ErrArgument)
	require.ErrorIs(t, tl.SeekPosition(j.CommittedPosition()+64), ErrArgument, "past the end")
	require.NoError(t, tl.SeekPosition(j.CommittedPosition()), "the end is a boundary")
	_, ok, err = tl.Next()
	require.NoError(t, err)
	require.False(t, ok)

	// From a time.
	require.NoError(t, tl.SeekTime(r.Timestamp))
	r3, _, err := tl.Next()
	require.NoError(t, err)
	require.Equal(t, r.Position, r3.Position)
	require.ErrorIs(t, tl.SeekTime(now+1), ErrNotFound)

	require.NoError(t, tl.Close())
	_, _, err = tl.Next()
	require.ErrorIs(t, err, ErrClosed)
}

func TestFlusherPolicies(t *testing.T) {
	flushes := func(j *Journal) int64 { return j.Stats().Flushes }
	t.Run("periodic by bytes", func(t *testing.T) {
		j := openT(t, testDir(t), Options{Flush: FlushPeriodic, FlushBytes: 4096, FlushInterval: 1 << 62})
		f := j.Flusher()
		appendN(t, j, 1, 2)
		_, err := f.DoWork()
		require.NoError(t, err)
		require.Zero(t, flushes(j), "under the byte threshold")
		appendN(t, j, 1, 40)
		n, err := f.DoWork()
		require.NoError(t, err)
		require.Equal(t, 1, n)
		require.Equal(t, int64(1), flushes(j))
		require.Equal(t, j.CommittedPosition(), j.flushedPosition())
	})
	t.Run("periodic by time", func(t *testing.T) {
		now := int64(0)
		j := openT(t, testDir(t), Options{Flush: FlushPeriodic, FlushBytes: 1 << 30, FlushInterval: 100, Clock: func() int64 { return now }})
		f := j.Flusher()
		appendN(t, j, 1, 1)
		_, _ = f.DoWork()
		now += 99
		_, _ = f.DoWork()
		require.Zero(t, flushes(j))
		now++
		_, _ = f.DoWork()
		require.Equal(t, int64(1), flushes(j))
		require.Equal(t, j.CommittedPosition(), j.flushedPosition())
		_, _ = f.DoWork()
		require.Equal(t, int64(1), flushes(j), "nothing new to sync")
	})
	t.Run("every commit", func(t *testing.T) {
		j := openT(t, testDir(t), Options{Flush: FlushEveryCommit})
		for range 20 {
			appendN(t, j, 1, 1)
			require.Equal(t, j.CommittedPosition(), j.flushedPosition())
		}
	})
	t.Run("os", func(t *testing.T) {
		j := openT(t, testDir(t), Options{})
		appendN(t, j, 1, 20)
		_, err := j.Flusher().DoWork()
		require.NoError(t, err)
		require.Zero(t, flushes(j))
		require.Less(t, j.flushedPosition(), j.CommittedPosition())
		require.NoError(t, j.Flush())
		require.Equal(t, j.CommittedPosition(), j.flushedPosition())
	})
}

func TestRetention(t *testing.T) {
	now := int64(0)
	clock := func() int64 { return now }
	t.Run("by size, not past a reader", func(t *testing.T) {
		j := openT(t, testDir(t), Options{RetainBytes: 3 * testSegment, Clock: clock})
		tl, err := j.NewTailer()
		require.NoError(t, err)
		appendN(t, j, 1, 2000)
		require.Greater(t, j.Stats().Segments, 6)
		r, err := j.ApplyRetention()
		require.NoError(t, err)
		require.Zero(t, r.Deleted, "the tailer has read nothing yet")
		for range 1000 {
			_, _, err := tl.Next()
			require.NoError(t, err)
		}
		r, err = j.ApplyRetention()
		require.NoError(t, err)
		require.Greater(t, r.Deleted, 0)
		require.Less(t, j.firstPosition(), tl.Position(), "the reader's segment stays")
		require.NoError(t, tl.Close())
		r, err = j.ApplyRetention()
		require.NoError(t, err)
		require.Equal(t, 3, j.Stats().Segments)
		tl2, err := j.NewTailer()
		require.NoError(t, err)
		defer tl2.Close()
		require.ErrorIs(t, tl2.SeekSequence(1, 0), ErrBehindRetention)
		tl2.pos.Store(journalfile.SegmentHeaderLength)
		_, _, err = tl2.Next()
		require.ErrorIs(t, err, ErrBehindRetention)
	})
	t.Run("by age", func(t *testing.T) {
		j := openT(t, testDir(t), Options{RetainAge: 10, Clock: clock})
		appendN(t, j, 1, 500)
		now += 5
		appendN(t, j, 1, 500)
		r, err := j.ApplyRetention()
		require.NoError(t, err)
		require.Zero(t, r.Deleted)
		now += 20
		r, err = j.ApplyRetention()
		require.NoError(t, err)
		require.Equal(t, 1, j.Stats().Segments, "all but the writer's")
		require.Equal(t, int64(r.Deleted), j.Stats().DeletedSegments)
	})
	t.Run("hard limit revokes under a reader", func(t *testing.T) {
		j := openT(t, testDir(t), Options{RetainBytes: 2 * testSegment, HardLimitBytes: 4 * testSegment, Clock: clock})
		tl, err := j.NewTailer()
		require.NoError(t, err)
		defer tl.Close()
		_, _, err = tl.Next()
		require.NoError(t, err)
		appendN(t, j, 1, 2000)
		r, err := j.ApplyRetention()
		require.NoError(t, err)
		require.Greater(t, r.Forced, 0)
		require.Equal(t, 4, j.Stats().Segments)
		require.Equal(t, int64(r.Forced), j.Stats().ForcedDeletions)
		_, _, err = tl.Next()
		require.ErrorIs(t, err, ErrBehindRetention)
		require.ErrorIs(t, err, ErrReleased)
	})
}

// A Tailer verifies the CRC of what came from disk (records before the
// log's end at Open): a record that rotted in its file after a clean Close
// (so recovery, starting at the checkpoint, did not read it) is a
// *CorruptError naming it, in the writer's process and in a reader's. The
// records the writer commits after Open are trusted: they never left the
// process's memory through a crash.
func TestTailerVerifiesWhatCameFromDisk(t *testing.T) {
	dir := testDir(t)
	j := openT(t, dir, Options{})
	var positions []int64
	for i := range 10 {
		p, _, err := j.Append(1, 2, []byte{byte(i), 1, 2, 3, 4, 5, 6, 7})
		require.NoError(t, err)
		positions = append(positions, p)
	}
	require.NoError(t, j.Close())
	rotten := positions[4]
	f, err := os.OpenFile(filepath.Join(dir, journalfile.SegmentName(0)), os.O_RDWR, 0)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte{0xFF}, rotten+journalfile.RecordHeaderLength+3) // a body byte
	require.NoError(t, err)
	require.NoError(t, f.Close())

	reader, err := Open(dir, Options{ReadOnly: true, SegmentSize: testSegment, Logger: quiet})
	require.NoError(t, err)
	defer reader.Close()
	j = openT(t, dir, Options{})
	require.Zero(t, j.Recovery().Verified, "a clean close: recovery reads nothing before the end")
	_, _, err = j.Append(1, 2, []byte("after open"))
	require.NoError(t, err)
	for _, jj := range []*Journal{j, reader} {
		tl, err := jj.NewTailer()
		require.NoError(t, err)
		for range 4 {
			_, ok, err := tl.Next()
			require.NoError(t, err)
			require.True(t, ok)
		}
		_, _, err = tl.Next()
		var ce *corruptError
		require.ErrorAs(t, err, &ce)
		require.Equal(t, rotten, ce.Position)
		require.NoError(t, tl.Close())
	}
}
