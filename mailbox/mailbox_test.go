package mailbox

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/dutyrt/duty/internal/record"
	"github.com/dutyrt/duty/ringbuf"
	"github.com/stretchr/testify/require"
)

func TestConfig(t *testing.T) {
	mb := newMailbox(t, Config{})
	require.Equal(t, defaultCapacity, RingOf(mb).Capacity())
	require.Equal(t, 8192, mb.MaxClaimLength())
	require.Equal(t, 8160, mb.MaxPartsClaimLength())
	require.Equal(t, 32608, mb.MaxMessageSize())
	require.Equal(t, defaultMaxParts, mb.MaxParts())

	for _, cfg := range []Config{
		{Capacity: 512},
		{Capacity: 3000},
		{MaxMessageSize: -1},
		{MaxParts: -1},
		{UnblockTimeout: -time.Second},
		{MaxMessageSize: 32609},
	} {
		_, err := New(cfg)
		require.ErrorIs(t, err, ErrArgument, "%+v", cfg)
	}
	mb = newMailbox(t, Config{MaxMessageSize: 100, MaxParts: 3})
	require.Equal(t, 100, mb.MaxMessageSize())
	require.Equal(t, 3, mb.MaxParts())
	require.True(t, mb.cons.rd.Demotes(), "the ring's default")
	require.False(t, newMailbox(t, Config{NoDemote: true}).cons.rd.Demotes())
}

func TestSendDrainPlain(t *testing.T) {
	mb := newMailbox(t, Config{Name: "t"})
	require.NoError(t, mb.Send(1, []byte("one")))
	require.NoError(t, mb.Send(MaxTypeID, nil))
	require.NoError(t, mb.Send(2, pattern(2, mb.MaxClaimLength())))
	out := collect(t, mb)
	require.Equal(t, []got{
		{1, []string{"one"}, false},
		{MaxTypeID, []string{""}, false},
		{2, []string{string(pattern(2, mb.MaxClaimLength()))}, false},
	}, out)
	st := mb.Stats()
	require.Equal(t, "t", st.Name)
	require.Equal(t, int64(3), st.Delivered)
	require.Equal(t, 0, st.Depth)
	require.Positive(t, st.MaxDepth)
}

func TestSendValidation(t *testing.T) {
	mb := newMailbox(t, Config{MaxParts: 4})
	for _, id := range []int32{0, -1, MaxTypeID + 1, framedFlag | 1} {
		require.ErrorIs(t, mb.Send(id, nil), ErrTypeID)
		require.ErrorIs(t, mb.SendParts(id, nil, nil), ErrTypeID)
		_, err := mb.Claim(id, 1)
		require.ErrorIs(t, err, ErrTypeID)
		_, err = mb.ClaimParts(id, 1, 1)
		require.ErrorIs(t, err, ErrTypeID)
	}
	require.Equal(t, ErrTooLong, mb.Send(1, make([]byte, mb.MaxMessageSize()+1)))
	require.Equal(t, ErrTooLong, mb.SendParts(1, make([]byte, mb.MaxMessageSize()), nil))
	require.ErrorIs(t, mb.SendParts(1), ErrArgument)
	require.ErrorIs(t, mb.SendParts(1, nil, nil, nil, nil, nil), ErrArgument)
	_, err := mb.Claim(1, -1)
	require.ErrorIs(t, err, ErrArgument)
	_, err = mb.Claim(1, mb.MaxClaimLength()+1)
	require.Equal(t, ErrTooLong, err)
	_, err = mb.ClaimParts(1, 1, -1)
	require.ErrorIs(t, err, ErrArgument)
	_, err = mb.ClaimParts(1, mb.MaxPartsClaimLength()-7, 1)
	require.Equal(t, ErrTooLong, err)
	_, err = mb.ClaimParts(1)
	require.ErrorIs(t, err, ErrArgument)
	require.Zero(t, RingOf(mb).ProducerPosition(), "a refused send writes nothing")

	var zero Claim
	require.ErrorIs(t, zero.Commit(), ErrClaim)
	require.ErrorIs(t, zero.Abort(), ErrClaim)
}

// Send's fast path leaves the mailbox's tail guess at the tail, so the
// next send claims with one CAS (a stale guess is correct but costs a
// failed CAS and the general path every time).
func TestSendKeepsTheTailGuess(t *testing.T) {
	m, err := New(Config{Capacity: minCapacity})
	require.NoError(t, err)
	hint := m.prod.Hint()
	for i := range 100 { // wraps the 1 KiB ring several times
		require.NoError(t, m.Send(1, make([]byte, i%(record.MaxPayload+1))))
		require.Equal(t, RingOf(m).ProducerPosition(), hint.Load(), "after send %d", i)
		_, err := m.Drain(func(*Message) Action { return Continue }, 1)
		require.NoError(t, err)
	}
}

func TestBackPressure(t *testing.T) {
	mb := newMailbox(t, Config{Capacity: minCapacity})
	p := make([]byte, 56) // 64-byte records
	sent := 0
	for mb.Send(1, p) == nil {
		sent++
	}
	require.Equal(t, minCapacity/64, sent)
	require.Equal(t, ErrBackPressured, mb.Send(1, p))
	_, err := mb.Claim(1, 8)
	require.Equal(t, ErrBackPressured, err)
	require.Equal(t, ErrBackPressured, mb.SendParts(1, p, p))
	st := mb.Stats()
	require.Equal(t, int64(4), st.BackPressured) // the loop's last Send too
	require.Equal(t, minCapacity, st.Depth)
	n, err := mb.Drain(func(*Message) Action { return Continue }, 1000)
	require.NoError(t, err)
	require.Equal(t, sent, n)
	require.Equal(t, int64(minCapacity), mb.Stats().MaxDepth)
	require.NoError(t, mb.Send(1, p))
}

func TestMultipart(t *testing.T) {
	mb := newMailbox(t, Config{Capacity: 4096})
	s := mb.NewSender()
	require.NoError(t, mb.SendParts(4, []byte("a"), []byte(""), []byte("bc")))
	require.NoError(t, s.SendParts(5, []byte("single")))
	parts := [][]byte{pattern(1, 300), pattern(2, 300), pattern(3, 300), nil} // spans two records
	require.NoError(t, s.SendParts(6, parts...))
	pc, err := s.ClaimParts(7, 2, 0, 3)
	require.NoError(t, err)
	require.Equal(t, 3, pc.n, "the part lengths it was claimed with")
	copy(pc.Part(0), "xy")
	require.Empty(t, pc.Part(1))
	copy(pc.Part(2), "uvw")
	require.NoError(t, pc.Commit())
	pc, err = mb.ClaimParts(8, 4)
	require.NoError(t, err)
	copy(pc.Part(0), "solo")
	require.NoError(t, pc.Commit())
	pc, err = mb.ClaimParts(9, 1, 1)
	require.NoError(t, err)
	require.NoError(t, pc.Abort())
	require.ErrorIs(t, pc.Commit(), ErrClaim)

	out := collect(t, mb)
	require.Equal(t, []got{
		{4, []string{"a", "", "bc"}, true},
		{5, []string{"single"}, false},
		{6, []string{string(parts[0]), string(parts[1]), string(parts[2]), ""}, true},
		{7, []string{"xy", "", "uvw"}, true},
		{8, []string{"solo"}, true},
	}, out)
}

// Sizes around every boundary of the framing.
func TestFragmentedSizes(t *testing.T) {
	mb := newMailbox(t, Config{Capacity: 4096})
	s := mb.NewSender()
	maxRec, maxFrag, maxMsg := mb.MaxClaimLength(), mb.MaxPartsClaimLength(), mb.MaxMessageSize()
	for _, n := range []int{0, 1, maxFrag, maxRec, maxRec + 1, 2 * maxFrag, 2*maxFrag + 1, maxMsg - 1, maxMsg} {
		p := pattern(n, n)
		require.NoError(t, s.Send(3, p), n)
		out := collect(t, mb)
		require.Len(t, out, 1, n)
		require.Equal(t, string(p), out[0].parts[0], n)
		require.Equal(t, n > maxRec, out[0].framed, n)
	}
	// Multipart whose part boundaries fall inside length prefixes of later
	// fragments: every split of a part prefix across two records.
	for shift := range 8 {
		a := pattern(shift, maxFrag-shift)
		b := pattern(shift+1, 700)
		c := pattern(shift+2, 5)
		require.NoError(t, mb.SendParts(4, a, b, c))
		out := collect(t, mb)
		require.Len(t, out, 1)
		require.Equal(t, []string{string(a), string(b), string(c)}, out[0].parts, shift)
	}
	require.Equal(t, ErrTooLong, s.Send(3, make([]byte, maxMsg+1)))
}

// Abort of a multi-record message leaves all its records: the next Drain
// delivers it whole again. Break and the limit stop after a whole message.
func TestAbortMultiRecord(t *testing.T) {
	mb := newMailbox(t, Config{Capacity: 16384})
	big := pattern(7, 5000) // 3 records
	require.NoError(t, mb.Send(1, []byte("first")))
	require.NoError(t, mb.Send(2, big))
	require.NoError(t, mb.Send(3, []byte("last")))
	var seen []int32
	aborts := 0
	h := func(m *Message) Action {
		if m.TypeID() == 2 && aborts < 2 {
			aborts++
			return Abort
		}
		seen = append(seen, m.TypeID())
		if m.TypeID() == 2 {
			require.Equal(t, big, m.Payload())
		}
		return Continue
	}
	n, err := mb.Drain(h, 10)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	n, err = mb.Drain(h, 10)
	require.NoError(t, err)
	require.Zero(t, n)
	require.Equal(t, []int32{1}, seen)
	head := RingOf(mb).ConsumerPosition()
	n, err = mb.Drain(h, 10)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.Equal(t, []int32{1, 2, 3}, seen)
	require.Greater(t, RingOf(mb).ConsumerPosition(), head)
	require.Equal(t, int64(3), mb.Stats().Delivered)

	// Break on a multi-record message consumes all of it and stops.
	require.NoError(t, mb.Send(2, big))
	require.NoError(t, mb.Send(3, []byte("after")))
	seen = nil
	n, err = mb.Drain(func(m *Message) Action { seen = append(seen, m.TypeID()); return Break }, 10)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, []int32{2}, seen)
	n, err = mb.Drain(func(m *Message) Action { seen = append(seen, m.TypeID()); return Commit }, 10)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, []int32{2, 3}, seen)

	// The limit counts messages, not records.
	for range 3 {
		require.NoError(t, mb.Send(2, big))
	}
	for i := range 3 {
		n, err = mb.Drain(func(*Message) Action { return Commit }, 1)
		require.NoError(t, err)
		require.Equal(t, 1, n, i)
	}
	require.Zero(t, mb.Stats().Depth)
}

func TestDrainArguments(t *testing.T) {
	mb := newMailbox(t, Config{})
	_, err := mb.Drain(nil, 1)
	require.ErrorIs(t, err, ErrArgument)
	require.NoError(t, mb.Send(1, nil))
	n, err := mb.Drain(func(*Message) Action { return Continue }, 0)
	require.NoError(t, err)
	require.Zero(t, n)
	require.Equal(t, 1, len(collect(t, mb)))
}

// A drain that reaches the end of the ring goes on from its start.
func TestDrainAcrossWrap(t *testing.T) {
	mb := newMailbox(t, Config{Capacity: minCapacity})
	p := make([]byte, 100)
	for range 9 {
		require.NoError(t, mb.Send(1, p))
	}
	require.Len(t, collect(t, mb), 9)
	for i := range 5 {
		require.NoError(t, mb.Send(2, pattern(i, 100)))
	}
	n, err := mb.Drain(func(*Message) Action { return Continue }, 100)
	require.NoError(t, err)
	require.Equal(t, 5, n)
}

func TestHandlerPanicConsumesMessage(t *testing.T) {
	mb := newMailbox(t, Config{Capacity: 4096})
	require.NoError(t, mb.Send(1, pattern(1, 1500)))
	require.NoError(t, mb.Send(2, []byte("next")))
	require.Panics(t, func() {
		_, _ = mb.Drain(func(*Message) Action { panic("boom") }, 10)
	})
	out := collect(t, mb)
	require.Equal(t, []got{{2, []string{"next"}, false}}, out)
	require.Zero(t, mb.Stats().Corrupt)
}

func TestCloseDrain(t *testing.T) {
	mb := newMailbox(t, Config{})
	require.NoError(t, mb.Send(1, []byte("a")))
	require.NoError(t, mb.SendParts(2, []byte("b"), []byte("c")))
	n, err := mb.Close(Drain)
	require.NoError(t, err)
	require.Zero(t, n)
	require.ErrorIs(t, mb.Err(), ErrClosed)
	require.Equal(t, ErrClosed, mb.Send(1, nil))
	require.Equal(t, ErrClosed, mb.SendParts(1, nil, nil))
	_, err = mb.Claim(1, 1)
	require.Equal(t, ErrClosed, err)
	_, err = mb.ClaimParts(1, 1, 1)
	require.Equal(t, ErrClosed, err)
	require.Equal(t, ErrClosed, mb.SendContext(context.Background(), 1, nil))
	require.Len(t, collect(t, mb), 2)
	st := mb.Stats()
	require.True(t, st.Closed)
	require.Equal(t, int64(5), st.RefusedClosed)
	_, err = mb.Close(CloseMode(9))
	require.ErrorIs(t, err, ErrArgument)
}

func TestCloseDiscard(t *testing.T) {
	mb := newMailbox(t, Config{Capacity: 4096})
	require.NoError(t, mb.Send(1, []byte("a")))
	require.NoError(t, mb.Send(2, pattern(1, 1500)))
	require.NoError(t, mb.SendParts(3, []byte("b"), []byte("c")))
	n, err := mb.discardQueued()
	require.NoError(t, err)
	require.Zero(t, n, "an open mailbox never discards")
	n, err = mb.Close(Discard)
	require.NoError(t, err)
	require.Equal(t, 3, n)
	require.Equal(t, int64(3), mb.Stats().Discarded)
	require.Zero(t, mb.Stats().Depth)
	// A send that passed the state check before Close lands afterwards:
	// the next Drain discards and counts it.
	require.NoError(t, RingOf(mb).Write(1, []byte("late")))
	called := false
	n, err = mb.Drain(func(*Message) Action { called = true; return Continue }, 10)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.False(t, called)
	require.Equal(t, int64(4), mb.Stats().Discarded)
	require.Zero(t, mb.Stats().Delivered)

	// Drain first, then switch to Discard.
	mb2 := newMailbox(t, Config{})
	require.NoError(t, mb2.Send(1, nil))
	_, _ = mb2.Close(Drain)
	n, err = mb2.Close(Discard)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	n, err = mb2.Close(Drain) // never back from Discard to Drain
	require.NoError(t, err)
	require.Zero(t, n)
	require.Equal(t, stateDiscard, mb2.w.state.Load())
}

func TestSendContext(t *testing.T) {
	mb := newMailbox(t, Config{Capacity: minCapacity})
	p := make([]byte, 56)
	for mb.Send(1, p) == nil {
	}
	before := mb.Stats().BackPressured

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	require.Equal(t, context.DeadlineExceeded, mb.SendContext(ctx, 1, p))
	s := mb.NewSender()
	require.Equal(t, context.DeadlineExceeded, s.SendContext(ctx, 1, p))
	require.Equal(t, context.DeadlineExceeded, s.SendPartsContext(ctx, 1, p, p))
	require.Equal(t, context.DeadlineExceeded, mb.SendPartsContext(ctx, 1, p, p))
	require.Equal(t, before+4, mb.Stats().BackPressured)

	// Accepted once the owner drains; a close ends the wait.
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	wg.Add(2)
	go func() { defer wg.Done(); errs <- mb.SendContext(context.Background(), 2, p) }()
	go func() { defer wg.Done(); errs <- s.SendPartsContext(context.Background(), 3, p, p) }()
	deadline := time.Now().Add(30 * time.Second) // hang guard
	delivered := 0
	for delivered < 18 && time.Now().Before(deadline) {
		n, err := mb.Drain(func(*Message) Action { return Continue }, 1)
		require.NoError(t, err)
		delivered += n
		time.Sleep(100 * time.Microsecond)
	}
	wg.Wait()
	require.NoError(t, <-errs)
	require.NoError(t, <-errs)

	for mb.Send(1, p) == nil {
	}
	wg.Add(1)
	go func() { defer wg.Done(); errs <- mb.SendContext(context.Background(), 2, p) }()
	time.Sleep(time.Millisecond)
	_, _ = mb.Close(Drain)
	wg.Wait()
	require.Equal(t, ErrClosed, <-errs)
	require.ErrorIs(t, mb.SendContext(context.Background(), 0, p), ErrTypeID)
}

func TestCorruptRingReported(t *testing.T) {
	mb := newMailbox(t, Config{Capacity: minCapacity})
	require.NoError(t, mb.Send(1, nil))
	// A record whose length runs past the end of the ring.
	buf := RingOf(mb).Buffer()
	buf[0] = 0xff
	buf[1] = 0x7f
	_, err := mb.Drain(func(*Message) Action { return Continue }, 10)
	require.ErrorIs(t, err, ErrCorrupt)
	require.ErrorIs(t, err, ringbuf.ErrCorrupt)
	require.False(t, errors.Is(err, ErrCorruptFrame))
}

// A drain reads a second time from the start of the ring when its first
// read ended exactly at the end: unless the handler said Break there, or
// the drain reached its limit. And the limit, which the ring applies to
// records, still counts messages when it falls inside a framed one.
func TestDrainStopsAtTheEndOfTheRing(t *testing.T) {
	mb := newMailbox(t, Config{Capacity: minCapacity})
	payload := func(i byte) []byte { p := make([]byte, 56); p[0] = i; return p } // 64-byte records
	for i := range byte(16) {                                                    // exactly the ring
		require.NoError(t, mb.Send(1, payload(i)))
	}
	var seen []byte
	take := func(a Action) Handler {
		return func(m *Message) Action { seen = append(seen, m.Payload()[0]); return a }
	}
	n, err := mb.Drain(take(Continue), 15)
	require.NoError(t, err)
	require.Equal(t, 15, n)
	require.NoError(t, mb.Send(1, payload(16))) // at index 0
	require.NoError(t, mb.Send(1, payload(17)))

	seen = nil
	n, err = mb.Drain(take(Break), 10) // message 15 ends at the end of the ring
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, []byte{15}, seen)

	// Now at the start: a limit of 1 ending the read there stops the drain.
	n, err = mb.Drain(take(Continue), 1)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, []byte{15, 16}, seen)

	// A limit that the ring reaches inside a framed message (a plain
	// message, then a message of three records): the drain finishes the
	// framed message and counts it once.
	big := make([]byte, mb.MaxClaimLength()*2+1)
	mb2 := newMailbox(t, Config{})
	require.NoError(t, mb2.Send(1, []byte("plain")))
	require.NoError(t, mb2.Send(2, big))
	require.NoError(t, mb2.Send(3, []byte("after")))
	var types []int32
	n, err = mb2.Drain(func(m *Message) Action { types = append(types, m.TypeID()); return Continue }, 2)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.Equal(t, []int32{1, 2}, types)
	n, err = mb2.Drain(func(m *Message) Action { types = append(types, m.TypeID()); return Continue }, 2)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, []int32{1, 2, 3}, types)
	require.Zero(t, mb2.Stats().Depth)
}
