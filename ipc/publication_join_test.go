package ipc

import (
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/ringbuf"
)

// TestJoinAtTailDoesNotCleanAnOpenClaim: the last subscriber leaves while a
// claim below the tail is still open (a publisher writing a message it
// claimed while the subscriber was there). A subscriber that joins then
// used to join at the tail, past the open claim, and the owner's next limit
// update zeroed the log up to its position: the claim's marker too. The
// publisher's Commit then failed with ErrClaimState although nobody had
// unblocked it, and the payload it had written stayed in the log behind
// the clean position, so "length 0 = not written yet" no longer held there:
// a lap later a subscriber waiting at the tail read the payload's bytes as
// a record and delivered a message nobody sent. The joiner must not start
// beyond a claim that is still open.
func TestJoinAtTailDoesNotCleanAnOpenClaim(t *testing.T) {
	clock := newFakeClock()
	p := newTestPublication(t, 4096, clock.opt(), WithSubscriberTimeout(time.Hour))
	a := newTestSubscription(t, p, clock.opt())
	_, err := p.Offer(pubTypeID, make([]byte, 24)) // [0, 32)
	require.NoError(t, err)
	_, err = a.Poll(func(int32, []byte) {}, ringbuf.NoLimit)
	require.NoError(t, err)

	c, err := p.TryClaim(pubTypeID, 40) // [32, 80), open
	require.NoError(t, err)
	require.NoError(t, a.Close())                // the last subscriber leaves
	require.NoError(t, p.Heartbeat(clock.now())) // not connected: limit = tail
	b := newTestSubscription(t, p, clock.opt())
	require.NoError(t, p.Heartbeat(clock.now())) // cleans up to b's position

	// The publisher writes its payload, which (as any payload may) starts
	// with bytes that read as a record header, and commits.
	binary.LittleEndian.PutUint32(c.Payload[0:], 16)
	binary.LittleEndian.PutUint32(c.Payload[4:], pubTypeID)
	copy(c.Payload[8:], "STALE!!!")
	commitErr := c.Commit()

	var got []string
	h := func(_ int32, m []byte) { got = append(got, fmt.Sprintf("%d:%q", len(m), m[:min(len(m), 16)])) }
	for p.Position() < 4096 { // a lap, up to the end of the log
		_, err := p.Offer(pubTypeID, make([]byte, min(200, 4096-int(p.Position())-8)))
		require.NoError(t, err)
		_, err = b.Poll(h, ringbuf.NoLimit)
		require.NoError(t, err)
	}
	_, err = p.Offer(pubTypeID, make([]byte, 24)) // [4096, 4128): index 0..32
	require.NoError(t, err)
	_, err = p.Offer(pubTypeID, nil) // [4128, 4136): index 32..40; the tail is at index 40
	require.NoError(t, err)
	_, err = b.Poll(h, ringbuf.NoLimit)
	require.NoError(t, err)
	_, err = b.Poll(h, ringbuf.NoLimit)
	require.NoError(t, err)

	for _, m := range got {
		require.NotEqual(t, `8:"STALE!!!"`, m, "a message nobody sent, read from stale bytes past the tail (commit: %v)", commitErr)
	}
	require.NoError(t, commitErr, "a claim nobody unblocked")
	require.Equal(t, int64(32), b.JoinPosition(), "the joiner starts at the open claim")
	require.Equal(t, `40:"\x10\x00\x00\x00\x05\x00\x00\x00STALE!!!"`, got[0])
	require.Equal(t, p.Position(), b.Position())
}
