package journal

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dutyrt/duty/internal/journalfile"
	"github.com/stretchr/testify/require"
)

// Inspect describes a journal from outside: segments, the writer's
// published status (positions, Tailers, its pid; 0 after Close) and the
// indexed streams; a damaged status file is ErrCorrupt.
func TestInspect(t *testing.T) {
	dir := testDir(t)
	require.False(t, journalfile.IsJournal(dir))
	j := openT(t, dir, Options{Flush: FlushPeriodic})
	require.True(t, journalfile.IsJournal(dir))
	appendN(t, j, 1, 500) // several 64 KiB segments
	appendN(t, j, 2, 30)
	tl, err := j.NewTailer()
	require.NoError(t, err)
	f := j.Flusher()
	for range 4 {
		_, err := f.DoWork()
		require.NoError(t, err)
	}
	require.NoError(t, j.Flush())
	_, err = f.DoWork()
	require.NoError(t, err)

	info, err := journalfile.Inspect(dir)
	require.NoError(t, err)
	require.Equal(t, int64(testSegment), info.SegmentSize)
	require.Len(t, info.Segments, len(j.Segments()))
	require.True(t, info.HasStatus)
	st := info.Status
	require.Equal(t, j.CommittedPosition(), st.Committed)
	require.Equal(t, j.flushedPosition(), st.Flushed)
	require.Zero(t, st.FlushLag())
	require.Equal(t, int64(1), st.Tailers)
	require.Equal(t, int64(len(info.Segments)), st.Segments)
	require.Equal(t, os.Getpid(), st.WriterPID)
	require.Positive(t, st.Updated)
	require.Equal(t, []journalfile.StreamInfo{{ID: 1, First: 0, Indexed: 500}, {ID: 2, First: 0, Indexed: 30}}, info.Streams)

	appendN(t, j, 2, 1)
	require.NoError(t, tl.Close())
	require.NoError(t, j.Close())
	info, err = journalfile.Inspect(dir)
	require.NoError(t, err)
	require.Zero(t, info.Status.WriterPID, "closed")
	require.Zero(t, info.Status.Tailers)
	require.Equal(t, info.Status.Committed, info.Status.Flushed)
	require.Equal(t, int64(31), info.Streams[1].Indexed, "Close indexes the rest")

	require.NoError(t, os.WriteFile(filepath.Join(dir, journalfile.StatusName), make([]byte, journalfile.StatusLength), 0o644))
	_, err = journalfile.Inspect(dir)
	require.ErrorIs(t, err, ErrCorrupt)
	require.NoError(t, os.WriteFile(filepath.Join(dir, journalfile.StatusName), []byte("short"), 0o644))
	_, err = journalfile.Inspect(dir)
	require.ErrorIs(t, err, ErrCorrupt)
}
