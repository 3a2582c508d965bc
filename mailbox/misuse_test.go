package mailbox

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDrainAfterPanicCountsRight: a handler that panics leaves the drain's
// per-read bookkeeping (records of the read that are not messages) behind;
// the next Drain must not subtract it from what it delivers. The corrupt
// record found before the panic is reported by that next Drain: nothing is
// lost, not even an error.
func TestDrainAfterPanicCountsRight(t *testing.T) {
	mb := newMailbox(t, Config{})
	// A record no correct sender writes (reserved type bits): dropped.
	require.NoError(t, RingOf(mb).Write(1<<24|1, []byte("junk")))
	require.NoError(t, mb.Send(1, []byte("boom")))
	require.Panics(t, func() {
		_, _ = mb.Drain(func(*Message) Action { panic("boom") }, 10)
	})

	require.NoError(t, mb.Send(2, []byte("next")))
	var delivered []string
	n, err := mb.Drain(func(m *Message) Action {
		delivered = append(delivered, string(m.Payload()))
		return Continue
	}, 10)
	require.ErrorIs(t, err, ErrCorruptFrame, "the record dropped before the panic, reported now")
	require.Equal(t, []string{"next"}, delivered)
	require.Equal(t, 1, n)
	require.Equal(t, int64(2), mb.Stats().Delivered, "boom was handed to the handler and consumed, then next")
	require.Equal(t, int64(1), mb.Stats().Corrupt)
}

// TestDrainReadsPastRecordsThatAreNotMessages: the ring counts records,
// the drain messages. Records that are not messages (the rest of a
// fragmented message whose handler panicked, a record dropped as corrupt)
// used to use up a small limit, so Drain(h, 1) returned 0 with a message
// waiting behind them.
func TestDrainReadsPastRecordsThatAreNotMessages(t *testing.T) {
	deliver := func(mb *Mailbox) (int, []string, error) {
		var got []string
		n, err := mb.Drain(func(m *Message) Action {
			got = append(got, string(m.Payload()))
			return Continue
		}, 1)
		return n, got, err
	}
	t.Run("after a panic", func(t *testing.T) {
		mb := newMailbox(t, Config{})
		require.NoError(t, mb.Send(1, make([]byte, 20000))) // three records
		require.NoError(t, mb.Send(2, []byte("next")))
		require.Panics(t, func() {
			_, _ = mb.Drain(func(*Message) Action { panic("boom") }, 1)
		})
		n, got, err := deliver(mb)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		require.Equal(t, []string{"next"}, got)
		require.Zero(t, mb.Stats().Depth)
	})
	t.Run("after corrupt records", func(t *testing.T) {
		mb := newMailbox(t, Config{})
		for range 3 {
			require.NoError(t, RingOf(mb).Write(1<<24|1, []byte("junk"))) // reserved type bits
		}
		require.NoError(t, mb.Send(2, []byte("next")))
		n, got, err := deliver(mb)
		require.ErrorIs(t, err, ErrCorruptFrame)
		require.Equal(t, 1, n)
		require.Equal(t, []string{"next"}, got)
		require.Equal(t, int64(3), mb.Stats().Corrupt)
	})
	t.Run("bounded", func(t *testing.T) {
		// More corrupt records than one Drain reads again for: it stops,
		// reports them, and the next Drain goes on.
		mb := newMailbox(t, Config{})
		for range maxRingReads + 4 {
			require.NoError(t, RingOf(mb).Write(1<<24|1, []byte("junk")))
		}
		require.NoError(t, mb.Send(2, []byte("next")))
		n, got, err := deliver(mb)
		require.ErrorIs(t, err, ErrCorruptFrame)
		require.Zero(t, n)
		require.Empty(t, got)
		n, got, err = deliver(mb)
		require.ErrorIs(t, err, ErrCorruptFrame)
		require.Equal(t, 1, n)
		require.Equal(t, []string{"next"}, got)
		require.Equal(t, int64(maxRingReads+4), mb.Stats().Corrupt)
	})
}

// TestMaxMessageSizeAppliesToPlainMessages: MaxMessageSize bounds every
// message, the ones that fit one record included, on every send path.
func TestMaxMessageSizeAppliesToPlainMessages(t *testing.T) {
	for _, limit := range []int{100, 40} { // 40: below the in-line fast path's 64 bytes
		mb := newMailbox(t, Config{MaxMessageSize: limit})
		require.Equal(t, limit, mb.MaxMessageSize())
		require.Equal(t, limit, mb.MaxClaimLength())
		require.Equal(t, ErrTooLong, mb.Send(1, make([]byte, limit+1)))
		require.Equal(t, ErrTooLong, mb.SendParts(1, make([]byte, limit+1)))
		require.Equal(t, ErrTooLong, mb.SendParts(1, make([]byte, limit/2), make([]byte, limit/2)))
		require.Equal(t, ErrTooLong, mb.NewSender().Send(1, make([]byte, limit+1)))
		_, err := mb.Claim(1, limit+1)
		require.Equal(t, ErrTooLong, err)
		require.NoError(t, mb.Send(1, make([]byte, limit)))
		require.NoError(t, mb.Send(1, make([]byte, 8)))
		out := collect(t, mb)
		require.Len(t, out, 2, "nothing refused was sent")
	}
}

// TestSecondCommitIsErrClaim: a Claim completes once. A second Commit (or
// Abort) returns ErrClaim even after the space has been reused by another
// sender's open claim, which a second Commit used to publish half written.
func TestSecondCommitIsErrClaim(t *testing.T) {
	mb := newMailbox(t, Config{Capacity: 1024}) // records of up to 128 bytes
	a, err := mb.Claim(1, 120)                  // a record of 128 bytes at offset 0
	require.NoError(t, err)
	copy(a.Payload(), "message A")
	require.NoError(t, a.Commit())
	for range 7 { // fill the rest of the ring: the next claim is at offset 0 again
		require.NoError(t, mb.Send(2, make([]byte, 120)))
	}
	require.Len(t, collect(t, mb), 8)

	b, err := mb.Claim(3, 120) // another sender's claim, same offset as a's
	require.NoError(t, err)
	copy(b.Payload(), "B, half") // ... still writing

	require.ErrorIs(t, a.Commit(), ErrClaim, "second Commit of a committed claim")
	require.ErrorIs(t, a.Abort(), ErrClaim)
	require.Nil(t, a.Payload())
	require.Empty(t, collect(t, mb), "b's claim is still open")
	require.NoError(t, b.Commit())
	require.Len(t, collect(t, mb), 1)

	p, err := mb.ClaimParts(1, 3, 4)
	require.NoError(t, err)
	require.NoError(t, p.Abort())
	require.ErrorIs(t, p.Commit(), ErrClaim)
	require.Panics(t, func() { p.Part(0) })
}

// TestDeliveredCountsMessagesOfAPanickedDrain: messages handed to a handler
// are consumed even when a later handler call of the same Drain panics (the
// panicking message too: the ring's rule), so Stats.Delivered must count
// them. It used to lose them all: the drain's count is only known when the
// ring's read returns, and the next Drain started again from zero.
func TestDeliveredCountsMessagesOfAPanickedDrain(t *testing.T) {
	mb := newMailbox(t, Config{Capacity: 4096})
	for i := range 3 {
		require.NoError(t, mb.Send(1, []byte{byte(i)}))
	}
	require.NoError(t, mb.Send(2, pattern(1, 1500))) // fragmented: 3 records
	require.NoError(t, mb.Send(1, []byte{9}))
	require.Panics(t, func() {
		_, _ = mb.Drain(func(m *Message) Action {
			if m.TypeID() == 2 {
				panic("boom")
			}
			return Continue
		}, 10)
	})
	out := collect(t, mb)
	require.Equal(t, []got{{1, []string{"\x09"}, false}}, out, "the panicking message and its records are consumed")
	require.Equal(t, int64(5), mb.Stats().Delivered, "3 delivered, 1 panicked (consumed), 1 after")
	require.Zero(t, mb.Stats().Corrupt)
}

// TestMaxPartsClaimLengthHonoursMaxMessageSize: MaxPartsClaimLength is
// the largest body ClaimParts accepts, so with a MaxMessageSize below one
// record's body it is MaxMessageSize (as MaxClaimLength is). It used to
// report the record's 8,160 bytes, and a claim of that length got
// ErrTooLong.
func TestMaxPartsClaimLengthHonoursMaxMessageSize(t *testing.T) {
	for _, limit := range []int{0, 100, 8160, 8161} {
		mb := newMailbox(t, Config{MaxMessageSize: limit})
		max := mb.MaxPartsClaimLength()
		if limit == 0 || limit > 8160 {
			require.Equal(t, 8160, max, limit)
		} else {
			require.Equal(t, limit, max, limit)
		}
		p, err := mb.ClaimParts(1, max)
		require.NoError(t, err, "ClaimParts of MaxPartsClaimLength, limit %d", limit)
		require.NoError(t, p.Commit())
		p, err = mb.ClaimParts(1, max-2*partLengthPrefix-1, 1) // a body of max bytes
		require.NoError(t, err, "two parts, limit %d", limit)
		require.NoError(t, p.Commit())
		_, err = mb.ClaimParts(1, max+1)
		require.Equal(t, ErrTooLong, err)
		require.Len(t, collect(t, mb), 2)
	}
}
