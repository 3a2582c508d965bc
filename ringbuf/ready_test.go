package ringbuf

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Ready is true exactly when a read would find a committed record at head:
// not for an empty ring or an open claim, yes for a message and for
// padding at the end, and yes for a corrupt head, so that the read that
// follows reports it.
func TestReady(t *testing.T) {
	forKinds(t, func(t *testing.T, k kind) {
		r := newRing(t, k, 1024)
		require.False(t, r.Ready(), "empty")

		require.NoError(t, r.Write(1, []byte("one")))
		require.True(t, r.Ready(), "a message")
		require.Equal(t, []msg{{1, "one"}}, drain(t, r))
		require.False(t, r.Ready(), "drained")

		c, err := r.TryClaim(2, 8)
		require.NoError(t, err)
		require.False(t, r.Ready(), "an open claim")
		require.NoError(t, r.Commit(c.Index))
		require.True(t, r.Ready(), "committed")
		require.Equal(t, []msg{{2, "\x00\x00\x00\x00\x00\x00\x00\x00"}}, drain(t, r))

		c, err = r.TryClaim(3, 8)
		require.NoError(t, err)
		require.NoError(t, r.Abort(c.Index))
		require.True(t, r.Ready(), "an aborted claim is padding to skip")
		n, err := r.Read(func(int32, []byte) { t.Fatal("padding delivered") }, NoLimit)
		require.NoError(t, err)
		require.Zero(t, n)
		require.False(t, r.Ready(), "padding skipped")

		// Fill up to the end of the ring: the record that does not fit
		// pads the end, which is ready although the read delivers
		// nothing of it.
		for 1024-r.ProducerPosition()%1024 >= 112+int64(k.reserve) {
			require.NoError(t, r.Write(1, make([]byte, 40)))
			drain(t, r)
		}
		require.NoError(t, r.Write(4, make([]byte, 100)))
		require.True(t, r.Ready(), "padding at the end, then the record at the start")
		require.Len(t, drain(t, r), 1)
		require.False(t, r.Ready())

		// A misaligned head is corruption: Ready lets the read report it.
		putLE64(r.Buffer(), 1024+headPositionOffset, r.ConsumerPosition()+3)
		require.True(t, r.Ready(), "misaligned head")
		_, err = r.Read(func(int32, []byte) {}, NoLimit)
		require.ErrorIs(t, err, ErrCorrupt)
	})
}
