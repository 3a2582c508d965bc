package ipc

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/ringbuf"
)

// TestHostileCleanPositionIsCorrupt: the clean position is a word of the
// shared file, which any process mapping it can write. A value whose
// distance to the slowest subscriber overflows int64 (math.MinInt64) used
// to pass updateLimit's window check (the difference wrapped negative), and
// the owner then "zeroed" from there to the subscriber's position: the
// length wrapped too and zero sliced out of range, a panic in the owner's
// Heartbeat (or Offer). It must be ErrLogCorrupt, with the log intact.
func TestHostileCleanPositionIsCorrupt(t *testing.T) {
	clock := newFakeClock()
	p := newTestPublication(t, 4096, clock.opt(), WithSubscriberTimeout(time.Hour))
	s := newTestSubscription(t, p, clock.opt())
	_, err := p.Offer(pubTypeID, []byte("unread"))
	require.NoError(t, err)

	p.cleanPos.Store(math.MinInt64) // a broken peer's store

	done := make(chan error, 1)
	go func() { done <- p.Heartbeat(clock.now()) }()
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Heartbeat did not return within 10 s: updateLimit is zeroing from a hostile clean position")
	}
	require.ErrorIs(t, err, ErrLogCorrupt)

	var got []string
	_, err = s.Poll(func(_ int32, b []byte) { got = append(got, string(b)) }, ringbuf.NoLimit)
	require.NoError(t, err)
	require.Equal(t, []string{"unread"}, got, "the subscriber's unread message was wiped")
}
