package journal

import (
	"syscall"
	"testing"

	"github.com/dutyrt/duty/internal/journalfile"
	"github.com/stretchr/testify/require"
)

// Under FlushEveryCommit a failed msync after the record is published is
// ErrNotDurable: the record is committed (readers see it, its sequence is
// used, it survives a reopen), the error says so and where, and a caller
// that follows the contract does not append it again: no duplicate.
func TestFailedSyncIsCommittedNotDurable(t *testing.T) {
	dir := testDir(t)
	j := openT(t, dir, Options{Flush: FlushEveryCommit})
	_, _, err := j.Append(1, 7, []byte("first"))
	require.NoError(t, err)
	t.Cleanup(journalfile.FailSyncs(1, syscall.EIO))
	pos, seq, err := j.Append(1, 7, []byte("second"))
	require.ErrorIs(t, err, ErrNotDurable)
	require.ErrorIs(t, err, syscall.EIO)
	require.Equal(t, int64(1), seq, "the record's sequence is returned")
	require.Greater(t, pos, int64(0))
	require.Contains(t, err.Error(), "sequence 1")
	require.Equal(t, int64(2), j.nextSequence(1))
	require.Less(t, j.flushedPosition(), j.CommittedPosition(), "not durable: not flushed")
	require.NoError(t, j.Flush())
	require.Equal(t, j.CommittedPosition(), j.flushedPosition())
	_, seq, err = j.Append(1, 7, []byte("third"))
	require.NoError(t, err)
	require.Equal(t, int64(2), seq)

	var bodies []string
	tl, err := j.NewTailer()
	require.NoError(t, err)
	for {
		r, ok, err := tl.Next()
		require.NoError(t, err)
		if !ok {
			break
		}
		bodies = append(bodies, string(r.Body))
	}
	require.NoError(t, tl.Close())
	require.Equal(t, []string{"first", "second", "third"}, bodies)
	require.NoError(t, j.Close())
	j = openT(t, dir, Options{})
	require.Equal(t, int64(3), j.nextSequence(1))
}
