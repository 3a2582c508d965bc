package journal

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/dutyrt/duty/internal/journalfile"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// Retention frees the disk blocks of the index entries of deleted
// records: the files keep their size and layout, the dead entries read as
// zeros (Lookup: ErrBehindRetention), the live ones are untouched, and a
// reopened journal trusts the trimmed indexes (no rebuild).
func TestRetentionTrimsIndexes(t *testing.T) {
	dir := testDir(t)
	j := openT(t, dir, Options{})
	s, err := j.Stream(1)
	require.NoError(t, err)
	const n = 40_000 // 16 B of index each: 625 KiB, about ten segments of log
	for i := range n {
		_, _, err := s.Append(3, []byte{byte(i), byte(i >> 8)})
		require.NoError(t, err)
	}
	_, err = j.indexUpTo(1 << 20)
	require.NoError(t, err)
	path := filepath.Join(dir, journalfile.IndexDirName, journalfile.IndexName(1))
	blocks := func() int64 {
		var st unix.Stat_t
		require.NoError(t, unix.Stat(path, &st))
		return st.Blocks * 512
	}
	before, size := blocks(), fileSize(t, path)

	require.NoError(t, j.Close())
	j = openT(t, dir, Options{RetainBytes: 2 * testSegment})
	r, err := j.ApplyRetention()
	require.NoError(t, err)
	require.Greater(t, r.Deleted, 5)
	after := blocks()
	require.Equal(t, size, fileSize(t, path), "the layout stays")
	t.Logf("index blocks: %d bytes before retention, %d after", before, after)
	require.Less(t, after, before/2, "the dead entries' blocks are freed")

	first := j.firstPosition()
	dead, live := 0, 0
	for seq := int64(0); seq < n; seq += 97 {
		e, err := j.Lookup(1, seq)
		if errors.Is(err, ErrBehindRetention) {
			require.Zero(t, live, "dead entries are a prefix")
			dead++
			continue
		}
		require.NoError(t, err, "sequence %d", seq)
		require.GreaterOrEqual(t, e.Position, first)
		live++
	}
	require.Greater(t, dead, 0)
	require.Greater(t, live, 0)
	checkIndexes(t, j)

	require.NoError(t, j.Close())
	j = openT(t, dir, Options{})
	require.False(t, j.Recovery().IndexRebuilt, "a trimmed index is trusted")
	checkIndexes(t, j)
	_, err = j.Lookup(1, n-1)
	require.NoError(t, err)
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	return fi.Size()
}
