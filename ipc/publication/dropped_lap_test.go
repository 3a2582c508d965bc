package publication

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/ringbuf"
)

// TestDroppedMidPollIsDroppedNotCorrupt: a subscriber passes its poll's
// drop check and is then held up (here: in its handler, as a SIGSTOP
// would hold it anywhere) for longer than its timeout; the publisher
// drops it and laps its unread records with records of another size, so
// its next header read lands inside a payload. The poll must report
// ErrSubscriberDropped, never ErrCorrupt: a correct publisher's log is not
// corrupt. The subscriber then rejoins and reads what comes next.
func TestDroppedMidPollIsDroppedNotCorrupt(t *testing.T) {
	clock := newFakeClock()
	p := newTestPublication(t, 4096, clock.opt(), WithSubscriberTimeout(time.Second))
	live := newTestSubscription(t, p, clock.opt())
	victim := newTestSubscription(t, p, clock.opt())
	var small [100]byte
	for range 8 { // 8 records of 112 bytes for the victim to read
		_, err := p.Offer(pubTypeID, small[:])
		require.NoError(t, err)
	}
	_, err := live.Poll(func(int32, []byte) {}, ringbuf.NoLimit)
	require.NoError(t, err)

	// Every byte 0x7F: a header read inside such a payload has a length
	// no record has.
	big := bytes.Repeat([]byte{0x7F}, 300)
	lapped := false
	n, err := victim.Poll(func(int32, []byte) {
		if lapped {
			return
		}
		lapped = true
		clock.add(2 * time.Second) // the victim is stale; live heartbeats now
		_, perr := live.Poll(func(int32, []byte) {}, ringbuf.NoLimit)
		require.NoError(t, perr)
		var written int
		for spins := 0; written < 3*4096; spins++ {
			require.Less(t, spins, 100_000, "the publisher never got past the victim")
			_, oerr := p.Offer(pubTypeID, big)
			switch oerr {
			case nil:
				written += 320
			case ErrBackPressured, ErrAdminAction:
			default:
				require.NoError(t, oerr)
			}
			_, perr := live.Poll(func(int32, []byte) {}, ringbuf.NoLimit)
			require.NoError(t, perr)
		}
		require.Equal(t, int64(1), p.Stats().DroppedSubscribers)
	}, ringbuf.NoLimit)
	require.True(t, lapped)
	require.ErrorIs(t, err, ErrSubscriberDropped, "after %d messages", n)
	require.NotErrorIs(t, err, ErrCorrupt)

	// Rejoin: a new subscription reads what is published from now on.
	require.NoError(t, victim.Close())
	again := newTestSubscription(t, p, clock.opt())
	_, err = p.Offer(pubTypeID, small[:])
	require.NoError(t, err)
	got := 0
	for range 100 {
		k, err := again.Poll(func(int32, []byte) {}, ringbuf.NoLimit)
		require.NoError(t, err)
		if got += k; got > 0 {
			break
		}
	}
	require.Positive(t, got, "the rejoined subscriber reads")
}
