package publication

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/ringbuf"
)

// TestCloseFromHandler: a handler that closes its own Subscription (it
// read a "last message", say) is on the polling goroutine, not concurrent
// with Poll. Close released the mapping at once, and the poll then went on
// reading the next record header and stored its position into the
// unmapped slot: a fatal SIGSEGV (caught here with SetPanicOnFault). Close
// from a handler takes effect when the poll returns: the poll stops after
// that handler, publishes its position, and then releases the file.
func TestCloseFromHandler(t *testing.T) {
	p := newTestPublication(t, 4096)
	for _, plain := range []bool{true, false} {
		s := newTestSubscription(t, p)
		for range 3 {
			_, err := p.Offer(pubTypeID, []byte("message"))
			require.NoError(t, err)
		}
		n := 0
		var pollErr error
		func() {
			defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("plain %v: the poll touched the mapping after Close: %v", plain, r)
				}
			}()
			if plain {
				_, pollErr = s.Poll(func(int32, []byte) { n++; require.NoError(t, s.Close()) }, ringbuf.NoLimit)
			} else {
				_, pollErr = s.ControlledPoll(func(int32, []byte) ringbuf.Action {
					n++
					require.NoError(t, s.Close())
					return ringbuf.Commit
				}, ringbuf.NoLimit)
			}
		}()
		require.NoError(t, pollErr)
		require.Equal(t, 1, n, "no message is delivered after Close")
		require.Equal(t, int64(16), s.Position()-s.joinedAt(), "the closing poll consumed its message")
		_, err := s.Poll(func(int32, []byte) {}, ringbuf.NoLimit)
		require.ErrorIs(t, err, ErrClosed)
		require.Error(t, s.file().Guard(func() error { return nil }), "the file is released")
	}
}

// TestCloseAfterHandlerPanic: a handler panic (recovered by the caller)
// leaves the poll without returning normally; a Close after it still
// releases the subscription at once.
func TestCloseAfterHandlerPanic(t *testing.T) {
	p := newTestPublication(t, 4096)
	s := newTestSubscription(t, p)
	_, err := p.Offer(pubTypeID, []byte("message"))
	require.NoError(t, err)
	require.Panics(t, func() { _, _ = s.Poll(func(int32, []byte) { panic("handler") }, ringbuf.NoLimit) })
	require.NoError(t, s.Close())
	require.Error(t, s.file().Guard(func() error { return nil }), "the file is released")
}
