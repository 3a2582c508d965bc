package journal

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/journalfile"
	"github.com/dutyrt/duty/internal/mmapfile"
)

func TestSegmentNamesSortByPosition(t *testing.T) {
	require.Equal(t, "00000000000000000000.seg", journalfile.SegmentName(0))
	require.Equal(t, "00000000001073741824.seg", journalfile.SegmentName(1<<30))
	st, ok := journalfile.ParseSegmentName("00000000001073741824.seg")
	require.True(t, ok)
	require.Equal(t, int64(1<<30), st)
	for _, bad := range []string{"1073741824.seg", "0000000000107374182x.seg", "00000000001073741824.tmp", "-0000000001073741824.seg"} {
		_, ok := journalfile.ParseSegmentName(bad)
		require.False(t, ok, bad)
	}
}

// A reader that still holds a segment when the journal closes has its
// mapping revoked after the grace interval: its next read is ErrReleased,
// and a body it got before reads zeros instead of faulting.
func TestCloseRevokesMappingsUnderLateReaders(t *testing.T) {
	j, err := Open(testDir(t), Options{SegmentSize: testSegment, CloseGrace: 10 * time.Millisecond})
	require.NoError(t, err)
	appendN(t, j, 1, 3)
	tl, err := j.NewTailer()
	require.NoError(t, err)
	r, ok, err := tl.Next()
	require.NoError(t, err)
	require.True(t, ok)
	body := r.Body
	require.NoError(t, checkBody(body, 1, 0))
	require.NoError(t, j.Close())
	require.Equal(t, int64(1), j.Stats().ForcedReleases)
	_, _, err = tl.Next()
	require.ErrorIs(t, err, ErrReleased)
	for _, b := range body {
		require.Zero(t, b, "a revoked mapping reads zeros")
	}
	require.NoError(t, tl.Close(), "the last holder's release unmaps the revoked range")
	_, err = j.NewTailer()
	require.ErrorIs(t, err, ErrClosed)
	require.NoError(t, j.Close(), "Close is idempotent")
}

// Close waits for a holder that lets go within the grace interval.
func TestCloseWaitsForHolders(t *testing.T) {
	j, err := Open(testDir(t), Options{SegmentSize: testSegment, CloseGrace: time.Minute})
	require.NoError(t, err)
	appendN(t, j, 1, 3)
	tl, err := j.NewTailer()
	require.NoError(t, err)
	_, _, err = tl.Next()
	require.NoError(t, err)
	done := make(chan error)
	go func() { done <- j.Close() }()
	for !j.closed.Load() {
		time.Sleep(time.Millisecond)
	}
	require.NoError(t, tl.Close())
	require.NoError(t, <-done)
	require.Zero(t, j.Stats().ForcedReleases)
}

func TestSegmentRefcount(t *testing.T) {
	j := openT(t, testDir(t), Options{})
	s, err := j.acquire(0)
	require.NoError(t, err)
	require.Equal(t, int64(4), s.Refs.Load(), "table, writer, indexer, us")
	require.NoError(t, s.Release())
	_, err = j.acquire(testSegment)
	require.ErrorIs(t, err, errNotYet)
	require.NoError(t, j.Close())
	require.Zero(t, s.Refs.Load())
	require.ErrorIs(t, s.Hold(), ErrReleased)
	require.ErrorIs(t, s.Release(), ErrReleased)
}

// Where fallocate is missing, a segment is written with zeros: not sparse.
func TestWriteZerosFillsTheFile(t *testing.T) {
	f, err := os.Create(filepath.Join(testDir(t), "z"))
	require.NoError(t, err)
	defer f.Close()
	_, err = f.Write([]byte{1, 2, 3})
	require.NoError(t, err)
	require.NoError(t, mmapfile.WriteZeros(int(f.Fd()), 100_000))
	b, err := os.ReadFile(f.Name())
	require.NoError(t, err)
	require.Len(t, b, 100_000)
	require.True(t, journalfile.AllZero(b))
}

func TestSegmentsReportPositions(t *testing.T) {
	j := openT(t, testDir(t), Options{})
	appendN(t, j, 1, 1000) // a few segments
	c, err := j.Claim(1, 1, 100)
	require.NoError(t, err)
	segs := j.Segments()
	require.Greater(t, len(segs), 2)
	last := segs[len(segs)-1]
	require.Equal(t, c.Position-last.Start, last.Committed)
	require.Equal(t, int64(testSegment), segs[0].Committed, "a full segment")
	require.Less(t, segs[0].Flushed, segs[0].Committed, "FlushOS: nothing synced yet")
	require.NoError(t, j.Commit())
	require.NoError(t, j.Flush())
	segs = j.Segments()
	for _, s := range segs {
		require.Equal(t, s.Committed, s.Flushed)
	}
	require.GreaterOrEqual(t, segs[len(segs)-1].Holders, int64(1), "the writer holds its segment")
}

// A Flusher prepares the next segment (under a temporary name) once the
// writer is past half of its segment; the roll puts that one in place.
// Close removes a prepared segment that was never used.
func TestFlusherPreparesTheNextSegment(t *testing.T) {
	dir := testDir(t)
	j := openT(t, dir, Options{Flush: FlushPeriodic})
	f := j.Flusher()
	tmp := filepath.Join(dir, journalfile.SegmentName(testSegment)+".tmp")
	_, err := f.DoWork()
	require.NoError(t, err)
	require.NoFileExists(t, tmp, "not before half the segment")
	for j.CommittedPosition() < testSegment/2 {
		appendN(t, j, 1, 1)
	}
	_, err = f.DoWork()
	require.NoError(t, err)
	require.FileExists(t, tmp)
	prepared := j.prepared
	require.NotNil(t, prepared)
	for j.CommittedPosition() < testSegment {
		appendN(t, j, 1, 1)
	}
	require.NoFileExists(t, tmp)
	require.FileExists(t, filepath.Join(dir, journalfile.SegmentName(testSegment)))
	require.Equal(t, prepared, j.cur, "the roll took the prepared segment")
	for j.CommittedPosition() < testSegment+testSegment/2+journalfile.SegmentHeaderLength {
		appendN(t, j, 1, 1)
	}
	_, err = f.DoWork()
	require.NoError(t, err)
	require.FileExists(t, filepath.Join(dir, journalfile.SegmentName(2*testSegment)+".tmp"))
	require.NoError(t, j.Close())
	require.NoFileExists(t, filepath.Join(dir, journalfile.SegmentName(2*testSegment)+".tmp"))
	require.NoFileExists(t, filepath.Join(dir, journalfile.SegmentName(2*testSegment)))
	j2 := openT(t, dir, Options{})
	require.Empty(t, j2.Recovery().RemovedSegments)
	require.Equal(t, map[uint32]int64{1: j2.nextSequence(1)}, readAll(t, j2))
}

// Nothing is synced while the writer appends under FlushOS: the segment a
// Flusher prepares ahead is not synced (a sync then would make the
// appender's page faults wait for the file system's journal commit); the
// first Flush syncs its header with its name, and a failure there is the
// Flush's error with every record kept.
func TestPreparedSegmentIsSyncedByTheFirstFlush(t *testing.T) {
	dir := testDir(t)
	j := openT(t, dir, Options{}) // FlushOS
	f := j.Flusher()
	restore := journalfile.FailSyncs(1<<30, syscall.EIO) // every sync fails
	for j.CommittedPosition() < 2*testSegment+testSegment/2 {
		appendN(t, j, 1, 1)
		_, err := f.DoWork()
		require.NoError(t, err, "a sync while appending")
	}
	require.NotNil(t, j.prepared, "a segment was prepared")
	require.ErrorIs(t, j.Flush(), syscall.EIO)
	restore()
	require.NoError(t, j.Flush())
	require.Equal(t, j.CommittedPosition(), j.flushedPosition())
	require.Equal(t, map[uint32]int64{1: j.nextSequence(1)}, readAll(t, j))
}
