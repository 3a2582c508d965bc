package journal

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dutyrt/duty/internal/journalfile"
	"github.com/stretchr/testify/require"
)

// What used to go unnoticed is a typed error under RecoverStrict and a
// line of the recovery report under the other modes.
func TestSilentLossesAreVisible(t *testing.T) {
	base := testDir(t)
	written(t, base, 1000)
	segs, _ := filepath.Glob(filepath.Join(base, "*.seg"))
	require.Greater(t, len(segs), 3)

	t.Run("first segment deleted", func(t *testing.T) {
		dir := copyDir(t, base)
		require.NoError(t, os.Remove(filepath.Join(dir, filepath.Base(segs[0]))))
		_, err := Open(dir, Options{SegmentSize: testSegment, Logger: quiet})
		require.ErrorIs(t, err, errMissingSegment)
		require.ErrorIs(t, err, ErrCorrupt)
		j := openT(t, dir, Options{Recovery: RecoverSkip})
		r := j.Recovery()
		require.Len(t, r.MissingSegments, 1)
		require.ErrorIs(t, r.MissingSegments[0], errMissingSegment)
		require.Contains(t, r.String(), "missing")
		require.NoError(t, j.Close())
		j = openT(t, dir, Options{}) // accepted once: the checkpoint now records the new first
		require.Empty(t, j.Recovery().MissingSegments)
	})
	t.Run("retention is not a loss", func(t *testing.T) {
		dir := copyDir(t, base)
		j := openT(t, dir, Options{RetainBytes: 2 * testSegment})
		res, err := j.ApplyRetention()
		require.NoError(t, err)
		require.Greater(t, res.Deleted, 0)
		require.NoError(t, j.Close())
		j = openT(t, dir, Options{})
		require.Empty(t, j.Recovery().MissingSegments, j.Recovery().String())
	})
	t.Run("last segment deleted after a crash without a checkpoint", func(t *testing.T) {
		dir := copyDir(t, base)
		require.NoError(t, os.Remove(filepath.Join(dir, journalfile.CkptName)))
		require.NoError(t, os.Remove(filepath.Join(dir, filepath.Base(segs[len(segs)-1]))))
		_, err := Open(dir, Options{SegmentSize: testSegment, Logger: quiet})
		require.ErrorIs(t, err, errMissingSegment)
		require.ErrorIs(t, err, ErrCorrupt)
		require.Contains(t, err.Error(), "end-of-segment marker")
		j := openT(t, dir, Options{Recovery: RecoverTruncate})
		r := j.Recovery()
		require.Len(t, r.MissingSegments, 1, r.String())
		require.Contains(t, r.String(), "missing")
		appendN(t, j, 1, 1) // appending goes on in a new last segment
	})
	t.Run("checkpoint error in the report", func(t *testing.T) {
		dir := copyDir(t, base)
		require.NoError(t, os.WriteFile(filepath.Join(dir, journalfile.CkptName), []byte("garbage"), 0o644))
		j := openT(t, dir, Options{Recovery: RecoverSkip})
		r := j.Recovery()
		require.ErrorIs(t, r.CheckpointError, ErrCorrupt)
		require.Contains(t, r.String(), "checkpoint of 7 bytes")
	})
	t.Run("foreign files under index", func(t *testing.T) {
		dir := copyDir(t, base)
		foreign := filepath.Join(dir, journalfile.IndexDirName, "backup")
		require.NoError(t, os.MkdirAll(foreign, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(foreign, "x"), []byte("x"), 0o644))
		note := filepath.Join(dir, journalfile.IndexDirName, "NOTES")
		require.NoError(t, os.WriteFile(note, []byte("mine"), 0o644))
		for _, rebuild := range []bool{false, true} {
			if rebuild {
				require.NoError(t, os.Remove(filepath.Join(dir, journalfile.IndexDirName, journalfile.IdxPosName)))
			}
			j := openT(t, dir, Options{})
			r := j.Recovery()
			require.Equal(t, rebuild, r.IndexRebuilt)
			require.ElementsMatch(t, []string{foreign, note}, r.ForeignFiles)
			require.Contains(t, r.String(), "foreign")
			checkIndexes(t, j)
			require.NoError(t, j.Close())
			require.FileExists(t, note)
			require.FileExists(t, filepath.Join(foreign, "x"))
		}
	})
}
