package publication

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/record"
	"github.com/dutyrt/duty/ringbuf"
)

// TestDeadOwnerZeroClaimAtTail: the owner (the only publisher) dies
// between its tail CAS and its claim marker, and that claim is the last
// thing in the log. The owner is provably gone and the tail can never move
// again, so the subscriber turns the claim into padding up to the tail and
// then reports ErrPublisherDead (it used to stay stuck at the claim).
func TestDeadOwnerZeroClaimAtTail(t *testing.T) {
	// The owner is found gone once its heartbeat is stale: no process with
	// its pid and start time runs (see newDeadOwnerTest).
	clock, p, s := newDeadOwnerTest(t)
	_, err := p.Offer(pubTypeID, []byte("before"))
	require.NoError(t, err)
	_, _, err = p.claim(record.Size(40)) // tail moved, owner "dies" before its marker
	require.NoError(t, err)

	// The owner is gone from here on: the polls below move the clock past
	// its liveness timeout.
	got, perr := pollWhileAdvancing(s, clock)
	require.Equal(t, []string{"before"}, got)
	require.ErrorIs(t, perr, ErrPublisherDead, "stuck at position %d, tail %d, unblocked %d",
		s.Position(), p.position(), p.Stats().UnblockedClaims)
	require.Equal(t, int64(1), p.Stats().UnblockedClaims)
	require.Equal(t, p.position(), s.Position())
}

// TestDeadOwnerZeroClaimAfterWrap: the dead owner's last claim did not fit
// before the end of the log, so it covered padding to the end plus the
// record at index 0, and the owner died before writing the record's header
// (after the padding's, or before it too). The subscriber gets past the end
// of the log (the padding, or a gap it pads to the end), then pads index 0
// up to the tail, and reports ErrPublisherDead.
func TestDeadOwnerZeroClaimAfterWrap(t *testing.T) {
	for name, paddingWritten := range map[string]bool{"padding written": true, "nothing written": false} {
		t.Run(name, func(t *testing.T) {
			// The owner is gone once the clock moves (below), not while
			// the lap fills: its heartbeat is fresh until then.
			clock, p, s := newDeadOwnerTest(t)
			n := 0
			h := func(int32, []byte) { n++ }
			for p.position() < 4096-64 { // fill the first lap up to 64 bytes before its end
				_, err := p.Offer(pubTypeID, make([]byte, min(200, 4096-64-int(p.position())-8)))
				require.NoError(t, err)
				_, err = s.Poll(h, ringbuf.NoLimit)
				require.NoError(t, err)
			}
			require.Equal(t, int64(4096-64), p.position())
			require.Equal(t, p.position(), s.Position())
			sent := n
			unblocks := int64(1)
			if paddingWritten {
				index, _, err := p.claim(record.Size(100)) // 64 bytes of padding (written) + 112 at index 0
				require.NoError(t, err)
				require.Zero(t, index)
			} else {
				// The claim's tail CAS alone: the owner died before the padding.
				require.True(t, p.tail.CompareAndSwap(4096-64, 4096+112))
				unblocks = 2
			}
			require.Equal(t, int64(4096+112), p.position())

			// The owner is gone from here on: the clock moves past its
			// liveness timeout.
			var perr error
			for i := 0; i < 20 && perr == nil; i++ {
				_, perr = s.Poll(h, ringbuf.NoLimit)
				clock.add(time.Minute)
			}
			require.ErrorIs(t, perr, ErrPublisherDead, "stuck at position %d, tail %d, unblocked %d",
				s.Position(), p.position(), p.Stats().UnblockedClaims)
			require.Equal(t, sent, n)
			require.Equal(t, unblocks, p.Stats().UnblockedClaims)
			require.Equal(t, p.position(), s.Position())
		})
	}
}

// TestZeroClaimAtTailLeftWhileOthersMayPublish: with a publisher opened by
// path, a zero claim that is the last thing before the tail is left alone
// (Aeron's unblocker does nothing when its scan reaches the tail): its
// claimer may be that live publisher, about to write its marker. Once it
// does and commits, the message arrives.
func TestZeroClaimAtTailLeftWhileOthersMayPublish(t *testing.T) {
	clock, p, s := newUnblockTest(t)
	q := openTestPublisher(t, p, clock)
	require.NoError(t, p.Heartbeat(clock.now()))
	// q.TryClaim, stalled between its tail CAS and its marker.
	const size = 40
	index, pos, err := q.claim(record.Size(size))
	require.NoError(t, err)
	var got []string
	h := func(_ int32, b []byte) { got = append(got, string(b)) }
	for range 5 {
		_, err := s.Poll(h, ringbuf.NoLimit)
		require.NoError(t, err)
		clock.add(time.Minute)
	}
	require.Zero(t, p.Stats().UnblockedClaims)
	require.Zero(t, s.Position())

	rl := int32(size + ringbuf.HeaderLength)
	q.mark(index, rl, pubTypeID) // q resumes
	copy(q.log.Bytes()[index+ringbuf.HeaderLength:], "late but whole")
	claim := Claim{Payload: q.log.Bytes()[index+8 : index+8+size], p: q, index: index, length: rl, typeID: pubTypeID, position: pos}
	require.NoError(t, claim.Commit())
	_, err = s.Poll(h, ringbuf.NoLimit)
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, "late but whole", got[0][:14])
}

// TestZeroClaimAtSealedTail: a publisher opened by path dies between its
// tail CAS and its marker, and then the owner closes the publication. The
// sealed tail can never move again: the subscriber pads the claim up to it
// and reaches the end of the stream.
func TestZeroClaimAtSealedTail(t *testing.T) {
	clock, p, s := newUnblockTest(t)
	q := openTestPublisher(t, p, clock)
	require.NoError(t, p.Heartbeat(clock.now()))
	_, err := p.Offer(pubTypeID, []byte("before"))
	require.NoError(t, err)
	_, _, err = q.claim(record.Size(40)) // q "dies" before its marker
	require.NoError(t, err)
	require.NoError(t, p.Close())
	got, perr := pollWhileAdvancing(s, clock)
	require.Equal(t, []string{"before"}, got)
	require.Equal(t, ErrEndOfStream, perr, "stuck at position %d, tail %d", s.Position(), q.position())
	require.Equal(t, int64(1), s.PublicationStats().UnblockedClaims)
}
