package publication

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/record"
	"github.com/dutyrt/duty/ipc"
	"github.com/dutyrt/duty/ringbuf"
)

func drain(t *testing.T, s *Subscription, h ringbuf.Handler) int {
	t.Helper()
	total := 0
	for {
		n, err := s.Poll(h, ringbuf.NoLimit)
		require.NoError(t, err)
		total += n
		if n == 0 && s.Position() >= s.pf.tail.Load()&^sealedBit {
			return total
		}
	}
}

func TestPublicationOfferPoll(t *testing.T) {
	p := newTestPublication(t, 64<<10)
	require.True(t, p.isOwner())
	require.Equal(t, 32<<10, p.windowLength())
	require.Equal(t, 8<<10, p.MaxMessageLength())
	require.Equal(t, 4096-8, p.maxPayloadLength())

	_, err := p.Offer(pubTypeID, []byte("nobody listens"))
	require.Equal(t, ErrNotConnected, err, "unwrapped outcome")
	require.False(t, p.isConnected())
	require.Equal(t, int64(1), p.Stats().NotConnected)

	s := newTestSubscription(t, p)
	require.Equal(t, int64(0), s.joinedAt())
	require.Equal(t, 1, p.activeSubscriberCount())

	var buf [8 << 10]byte
	var positions []int64
	for seq := range uint64(40) {
		pos, err := p.Offer(pubTypeID, pubPayload(buf[:], 0, seq, pubLength(seq, p.MaxMessageLength())))
		require.NoError(t, err)
		positions = append(positions, pos)
	}
	require.True(t, p.isConnected())
	require.Equal(t, positions[len(positions)-1], p.position())
	c := newPubChecker()
	require.Equal(t, 40, drain(t, s, c.handle))
	require.NoError(t, c.err)
	require.Equal(t, p.position(), s.Position())
	require.Zero(t, s.DroppedMessages())

	// A claim: committed and aborted ones.
	cl, err := p.TryClaim(pubTypeID, 20)
	require.NoError(t, err)
	copy(cl.Payload, pubPayload(buf[:], 0, 40, 20))
	require.NoError(t, cl.Commit())
	require.ErrorIs(t, cl.Commit(), ErrClaimState)
	require.ErrorIs(t, cl.Abort(), ErrClaimState)
	ab, err := p.TryClaim(pubTypeID, 30)
	require.NoError(t, err)
	require.NoError(t, ab.Abort())
	require.Equal(t, 1, drain(t, s, c.handle))
	require.NoError(t, c.err)
	require.Equal(t, 41, c.n)

	var zero Claim
	require.ErrorIs(t, zero.Commit(), ErrClaimState)
	_, err = p.TryClaim(pubTypeID, p.maxPayloadLength()+1)
	require.ErrorIs(t, err, ringbuf.ErrTooLong)
	_, err = p.Offer(0, nil)
	require.ErrorIs(t, err, ringbuf.ErrTypeID)
	_, err = p.Offer(maxTypeID+1, nil)
	require.ErrorIs(t, err, ringbuf.ErrTypeID)
	_, err = p.Offer(pubTypeID, make([]byte, p.MaxMessageLength()+1))
	require.ErrorIs(t, err, ringbuf.ErrTooLong)
	_, err = s.Poll(nil, 1)
	require.ErrorIs(t, err, ringbuf.ErrNilHandler)
}

// TestPublicationLaps runs many laps of the log with one subscriber, so
// that wraps (padding), cleaning and fragmented messages at every offset
// are exercised, and checks the log behind the slowest reader is zero.
func TestPublicationLaps(t *testing.T) {
	p := newTestPublication(t, 4096, withMTU(256))
	s := newTestSubscription(t, p)
	c := newPubChecker()
	var buf [512]byte
	for seq := range uint64(5000) {
		payload := pubPayload(buf[:], 1, seq, pubLength(seq, p.MaxMessageLength()))
		for {
			_, err := p.Offer(pubTypeID, payload)
			if err == nil {
				break
			}
			require.Equal(t, ErrBackPressured, err)
			_, err = s.Poll(c.handle, 3)
			require.NoError(t, err)
		}
	}
	drain(t, s, c.handle)
	require.NoError(t, c.err)
	require.Equal(t, 5000, c.n)
	require.Greater(t, p.position(), int64(50*p.capacity()), "many laps")
	require.NoError(t, p.Heartbeat(time.Now().UnixMilli()))
	st := p.Stats()
	require.Equal(t, s.Position(), st.CleanPosition, "cleaned up to the only reader")
	require.Equal(t, st.CleanPosition+int64(p.windowLength()), st.Limit)
	require.Positive(t, st.BackPressured)
	// Everything but the bytes between the clean position and the tail
	// (empty now) is zero: the next lap starts on a clean log.
	require.True(t, allZero(p.log.Bytes()), "log zeroed behind the reader")
}

func TestPublicationOutcomes(t *testing.T) {
	clock := newFakeClock()
	p := newTestPublication(t, 4096, clock.opt(), WithSubscriberTimeout(time.Second))
	s := newTestSubscription(t, p, clock.opt())
	payload := make([]byte, 100)
	var err error
	n := 0
	for err == nil {
		_, err = p.Offer(pubTypeID, payload)
		n++
	}
	require.Equal(t, ErrBackPressured, err)
	require.Equal(t, int64(1), p.Stats().BackPressured)
	require.LessOrEqual(t, p.position(), int64(p.windowLength()))

	// Another goroutine of the owner is updating the limit.
	p.mu.Lock()
	_, err = p.Offer(pubTypeID, payload)
	require.Equal(t, ErrAdminAction, err)
	p.mu.Unlock()
	require.Equal(t, int64(1), p.Stats().AdminActions)

	// An additional publisher does not update the limit.
	q, err := Open(ctxT(t), p.File().Path())
	require.NoError(t, err)
	defer q.Close()
	require.False(t, q.isOwner())
	_, err = q.Offer(pubTypeID, payload)
	require.Equal(t, ErrBackPressured, err)
	require.ErrorIs(t, q.Heartbeat(clock.now()), ipc.ErrNotOwner)

	count := 0
	_, err = s.Poll(func(int32, []byte) { count++ }, ringbuf.NoLimit)
	require.NoError(t, err)
	require.Equal(t, n-1, count)
	_, err = q.Offer(pubTypeID, payload)
	require.Equal(t, ErrBackPressured, err, "the owner has not updated the limit yet")
	require.NoError(t, p.Heartbeat(clock.now()))
	_, err = q.Offer(pubTypeID, payload)
	require.NoError(t, err, "after the owner's heartbeat")

	// The subscriber leaves: not connected.
	require.NoError(t, s.Close())
	for err == nil {
		_, err = p.Offer(pubTypeID, payload)
	}
	require.Equal(t, ErrNotConnected, err)

	require.NoError(t, p.Close())
	_, err = p.Offer(pubTypeID, payload)
	require.Equal(t, ErrClosed, err)
	_, err = q.Offer(pubTypeID, payload)
	require.Equal(t, ErrClosed, err, "the stream is sealed for every publisher")
	_, err = p.TryClaim(pubTypeID, 8)
	require.Equal(t, ErrClosed, err)
	require.ErrorIs(t, p.Heartbeat(clock.now()), ErrClosed)
	require.NoError(t, p.Close(), "idempotent")
}

// TestPublicationMaxPosition starts a publication near its max position
// (the tail, clean position and limit are moved there before anyone joins,
// as if it had run that long) and publishes until the outcome.
func TestPublicationMaxPosition(t *testing.T) {
	p := newTestPublication(t, 4096)
	start := p.maxPositionValue() - 3000
	start &^= 7
	p.tail.Store(start)
	p.cleanPos.Store(start)
	p.limit.Store(start)
	s := newTestSubscription(t, p)
	require.Equal(t, start, s.joinedAt())
	c := newPubChecker()
	var buf [256]byte
	var err error
	seq := uint64(0)
	for {
		_, err = p.Offer(pubTypeID, pubPayload(buf[:], 0, seq, 100))
		if err == ErrBackPressured {
			_, perr := s.Poll(c.handle, ringbuf.NoLimit)
			require.NoError(t, perr)
			continue
		}
		if err != nil {
			break
		}
		seq++
	}
	require.Equal(t, ErrMaxPositionExceeded, err)
	require.LessOrEqual(t, p.position(), p.maxPositionValue())
	require.Greater(t, p.position()+int64(record.Size(100)), p.maxPositionValue())
	drain(t, s, c.handle)
	require.NoError(t, c.err)
	require.Equal(t, int(seq), c.n)
}

// TestSubscriberDropped: a subscriber stops heartbeating; the publisher is
// back-pressured until the subscriber timeout, then drops it (counted) and
// publishing resumes for the live subscriber; the dropped one gets
// ErrSubscriberDropped, and its slot is reclaimed later.
func TestSubscriberDropped(t *testing.T) {
	clock := newFakeClock()
	p := newTestPublication(t, 4096, clock.opt(), WithSubscriberTimeout(time.Second))
	live := newTestSubscription(t, p, clock.opt())
	dead := newTestSubscription(t, p, clock.opt())
	require.Equal(t, 2, p.activeSubscriberCount())
	c := newPubChecker()
	var buf [256]byte
	seq := uint64(0)
	offer := func() error {
		_, err := p.Offer(pubTypeID, pubPayload(buf[:], 0, seq, 100))
		if err == nil {
			seq++
		}
		return err
	}
	var err error
	for err == nil {
		err = offer()
		_, perr := live.Poll(c.handle, ringbuf.NoLimit)
		require.NoError(t, perr)
	}
	require.Equal(t, ErrBackPressured, err, "held back by the silent subscriber")
	clock.add(500 * time.Millisecond)
	_, _ = live.Poll(c.handle, ringbuf.NoLimit) // heartbeats
	require.Equal(t, ErrBackPressured, offer(), "not yet stale")
	clock.add(600 * time.Millisecond)
	_, perr := live.Poll(c.handle, ringbuf.NoLimit)
	require.NoError(t, perr)
	require.NoError(t, offer(), "the silent subscriber is dropped")
	st := p.Stats()
	require.Equal(t, int64(1), st.DroppedSubscribers)
	require.Equal(t, 1, st.ActiveSubscribers)
	for range 200 {
		if offer() != nil {
			_, perr := live.Poll(c.handle, ringbuf.NoLimit)
			require.NoError(t, perr)
		}
	}
	drain(t, live, c.handle)
	require.NoError(t, c.err)
	require.Equal(t, int(seq), c.n)

	_, err = dead.Poll(c.handle, ringbuf.NoLimit)
	require.Equal(t, ErrSubscriberDropped, err)
	require.Equal(t, ErrSubscriberDropped, dead.Heartbeat(clock.now()))

	// The slot is freed after twice the timeout, and reused.
	clock.add(3 * time.Second)
	_, _ = live.Poll(c.handle, ringbuf.NoLimit)
	require.NoError(t, p.Heartbeat(clock.now()))
	require.Equal(t, int64(1), p.Stats().FreedSlots)
	again := newTestSubscription(t, p, clock.opt())
	require.Equal(t, dead.slotIndex(), again.slotIndex())
	require.Equal(t, live.Position(), again.joinedAt(), "joins at the slowest active position")
	_, err = dead.Poll(c.handle, ringbuf.NoLimit)
	require.Equal(t, ErrSubscriberDropped, err, "the slot is someone else's now")
	require.NoError(t, dead.Close())
	require.Equal(t, slotActive, again.slot.state(), "closing the dropped one leaves the new owner's slot alone")
}

func TestSubscriberSlots(t *testing.T) {
	p := newTestPublication(t, 4096, withMaxSubscribers(2))
	a := newTestSubscription(t, p)
	_ = newTestSubscription(t, p)
	_, err := OpenSubscription(ctxT(t), p.File().Path())
	require.ErrorIs(t, err, ErrNoSubscriberSlot)
	require.NoError(t, a.Close())
	require.NoError(t, a.Close())
	_, err = a.Poll(func(int32, []byte) {}, 1)
	require.Equal(t, ErrClosed, err)
	c := newTestSubscription(t, p)
	require.Equal(t, 0, c.slotIndex())
}

func TestControlledPoll(t *testing.T) {
	p := newTestPublication(t, 64<<10, withMTU(64))
	s := newTestSubscription(t, p)
	msgs := [][]byte{[]byte("one"), bytes.Repeat([]byte("fragmented "), 30), []byte("three"), []byte("four")}
	for _, m := range msgs {
		_, err := p.Offer(pubTypeID, m)
		require.NoError(t, err)
	}
	start := s.Position()

	// ABORT of a fragmented message rolls back to its BEGIN.
	var got [][]byte
	n, err := s.ControlledPoll(func(_ int32, b []byte) ringbuf.Action {
		if len(b) > 100 {
			return ringbuf.Abort
		}
		got = append(got, bytes.Clone(b))
		return ringbuf.Continue
	}, ringbuf.NoLimit)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, msgs[:1], got)
	afterOne := s.Position()
	require.Equal(t, start+int64(record.Size(3)), afterOne)

	// COMMIT publishes the position at once; BREAK stops after the message.
	var inHandler []int64
	n, err = s.ControlledPoll(func(_ int32, b []byte) ringbuf.Action {
		inHandler = append(inHandler, s.Position())
		got = append(got, bytes.Clone(b))
		if len(b) > 100 {
			return ringbuf.Commit
		}
		return ringbuf.Break
	}, ringbuf.NoLimit)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.Equal(t, msgs[:3], got)
	afterFrag := afterOne + int64(claimSize(len(msgs[1]), p.maxPayloadLength()))
	require.Equal(t, []int64{afterOne, afterFrag}, inHandler, "COMMIT published the position before the next message")
	require.Equal(t, afterFrag+int64(record.Size(5)), s.Position(), "BREAK consumed its message")

	n, err = s.Poll(func(_ int32, b []byte) { got = append(got, bytes.Clone(b)) }, ringbuf.NoLimit)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, msgs, got)
	require.Equal(t, p.position(), s.Position())
}

// TestHandlerPanicConsumes: as in Aeron, a handler that panics consumes
// its message.
func TestHandlerPanicConsumes(t *testing.T) {
	p := newTestPublication(t, 4096)
	s := newTestSubscription(t, p)
	for _, m := range []string{"boom", "next"} {
		_, err := p.Offer(pubTypeID, []byte(m))
		require.NoError(t, err)
	}
	require.Panics(t, func() {
		_, _ = s.Poll(func(int32, []byte) { panic("handler") }, ringbuf.NoLimit)
	})
	var got string
	n, err := s.Poll(func(_ int32, b []byte) { got = string(b) }, ringbuf.NoLimit)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, "next", got)
}

func TestJoinAtSlowest(t *testing.T) {
	p := newTestPublication(t, 4096)
	a := newTestSubscription(t, p)
	for range 10 {
		_, err := p.Offer(pubTypeID, make([]byte, 40))
		require.NoError(t, err)
	}
	_, err := a.Poll(func(int32, []byte) {}, 4)
	require.NoError(t, err)
	b := newTestSubscription(t, p)
	require.Equal(t, a.Position(), b.joinedAt())
	require.Equal(t, int64(4*48), b.joinedAt())
	n, err := b.Poll(func(int32, []byte) {}, ringbuf.NoLimit)
	require.NoError(t, err)
	require.Equal(t, 6, n)
	require.NoError(t, a.Close())
	require.NoError(t, b.Close())
	c := newTestSubscription(t, p)
	require.Equal(t, p.position(), c.joinedAt(), "no active subscriber: joins at the tail")
}

func TestEndOfStream(t *testing.T) {
	p := newTestPublication(t, 4096)
	s := newTestSubscription(t, p)
	for range 3 {
		_, err := p.Offer(pubTypeID, []byte("last words"))
		require.NoError(t, err)
	}
	end := p.position()
	require.NoError(t, p.Close())
	require.False(t, s.isEndOfStream())
	n, err := s.Poll(func(int32, []byte) {}, 2)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	n, err = s.Poll(func(int32, []byte) {}, ringbuf.NoLimit)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	n, err = s.Poll(func(int32, []byte) {}, ringbuf.NoLimit)
	require.Equal(t, ErrEndOfStream, err)
	require.Zero(t, n)
	require.True(t, s.isEndOfStream())
	st := s.PublicationStats()
	require.True(t, st.EndOfStream)
	require.Equal(t, end, st.EndPosition)
	require.Equal(t, end, s.pf.eos.Load())

	late, err := OpenSubscription(ctxT(t), s.file().Path())
	require.NoError(t, err, "a closed publication can still be joined; with every subscriber at the end, the joiner ends at once")
	defer late.Close()
	_, err = late.Poll(func(int32, []byte) {}, 1)
	require.ErrorIs(t, err, ErrEndOfStream)
}

// TestUnblockExternalClaim: a claim left open by an additional publisher is
// unblocked by the first subscriber whose position has not moved for the
// unblock timeout (counted once, whatever the number of subscribers); the
// messages after it arrive; the late Commit fails.
func TestUnblockExternalClaim(t *testing.T) {
	clock := newFakeClock()
	p := newTestPublication(t, 4096, clock.opt(), withUnblockTimeout(2*time.Second), WithSubscriberTimeout(time.Hour))
	subs := []*Subscription{newTestSubscription(t, p, clock.opt()), newTestSubscription(t, p, clock.opt())}
	q := openTestPublisher(t, p, clock)
	require.NoError(t, p.Heartbeat(clock.now())) // the owner raises the limit for everyone
	torn, err := q.TryClaim(pubTypeID, 30)
	require.NoError(t, err)
	for _, m := range []string{"after", "the claim"} {
		_, err := p.Offer(pubTypeID, []byte(m))
		require.NoError(t, err)
	}
	var got []string
	h := func(_ int32, b []byte) { got = append(got, string(b)) }
	pollAll := func() {
		for _, s := range subs {
			n, err := s.Poll(h, ringbuf.NoLimit)
			require.NoError(t, err)
			_ = n
		}
	}
	pollAll()
	clock.add(time.Second)
	pollAll()
	require.Empty(t, got, "blocked at the claim")
	clock.add(1500 * time.Millisecond)
	pollAll()
	pollAll()
	require.Equal(t, []string{"after", "the claim", "after", "the claim"}, got)
	require.Equal(t, int64(1), p.Stats().UnblockedClaims)
	require.ErrorIs(t, torn.Commit(), ErrClaimState, "the late commit does not overwrite the padding")
}

// TestUnblockZeroGap: a claimer that died between its tail CAS and its
// marker leaves zeros; the gap up to the next record becomes padding.
func TestUnblockZeroGap(t *testing.T) {
	clock, p, s := newUnblockTest(t)
	q := openTestPublisher(t, p, clock)
	_, err := p.Offer(pubTypeID, []byte("before"))
	require.NoError(t, err)
	_, _, err = q.claim(record.Size(40)) // the "dead" claim: tail moved, nothing written
	require.NoError(t, err)
	_, err = p.Offer(pubTypeID, []byte("after"))
	require.NoError(t, err)
	var got []string
	h := func(_ int32, b []byte) { got = append(got, string(b)) }
	_, err = s.Poll(h, ringbuf.NoLimit)
	require.NoError(t, err)
	_, err = s.Poll(h, ringbuf.NoLimit)
	require.NoError(t, err)
	require.Equal(t, []string{"before"}, got)
	clock.add(1500 * time.Millisecond)
	_, err = s.Poll(h, ringbuf.NoLimit)
	require.NoError(t, err)
	_, err = s.Poll(h, ringbuf.NoLimit)
	require.NoError(t, err)
	require.Equal(t, []string{"before", "after"}, got)
	require.Equal(t, int64(1), p.Stats().UnblockedClaims)
	require.Equal(t, p.position(), s.Position())
}

// TestOwnerClaimNotUnblockedWhileAlive: without external publishers, a
// claim is only unblocked once the owner is gone; a live owner's slow
// claim is left alone whatever the time.
func TestOwnerClaimNotUnblockedWhileAlive(t *testing.T) {
	clock, p, s := newUnblockTest(t)
	require.NoError(t, p.File().Heartbeat(clock.now()))
	cl, err := p.TryClaim(pubTypeID, 8)
	require.NoError(t, err)
	for range 3 {
		clock.add(time.Hour) // the heartbeat goes stale, but the process runs
		n, err := s.Poll(func(int32, []byte) {}, ringbuf.NoLimit)
		require.NoError(t, err)
		require.Zero(t, n)
	}
	require.Zero(t, p.Stats().UnblockedClaims)
	require.NoError(t, cl.Commit())
	n, err := s.Poll(func(int32, []byte) {}, ringbuf.NoLimit)
	require.NoError(t, err)
	require.Equal(t, 1, n)
}

func TestCreatePublicationArguments(t *testing.T) {
	dir := testDir(t)
	for name, c := range map[string]struct {
		capacity int
		opts     []Option
	}{
		"capacity not a power of two": {capacity: 3000},
		"capacity too small":          {capacity: 512},
		"window above half":           {capacity: 4096, opts: []Option{withWindow(4096)}},
		"window misaligned":           {capacity: 4096, opts: []Option{withWindow(1001)}},
		"mtu too large":               {capacity: 4096, opts: []Option{withMTU(1024)}},
		"mtu misaligned":              {capacity: 4096, opts: []Option{withMTU(100)}},
		"message too long for window": {capacity: 4096, opts: []Option{withMaxMessageLength(1500)}},
		"no subscriber slot":          {capacity: 4096, opts: []Option{withMaxSubscribers(-1)}},
		"timeout":                     {capacity: 4096, opts: []Option{WithSubscriberTimeout(time.Microsecond)}},
		"nil clock":                   {capacity: 4096, opts: []Option{WithClock(nil)}},
	} {
		_, err := Create(dir, "bad", c.capacity, c.opts...)
		require.ErrorIs(t, err, ipc.ErrArgument, name)
	}
	ents, err := testDirEntries(dir)
	require.NoError(t, err)
	require.Empty(t, ents, "nothing created")

	r, err := ipc.CreateRing(dir, "ring", 1024)
	require.NoError(t, err)
	defer r.Close()
	_, err = OpenSubscription(ctxT(t), r.File.Path())
	require.ErrorIs(t, err, ipc.ErrKind)
	_, err = Open(ctxT(t), r.File.Path())
	require.ErrorIs(t, err, ipc.ErrKind)
}

// TestOpenPublicationNotReady: a publication file whose metadata was never
// written (its creator died between ipc.Create and the metadata) is not ready.
func TestOpenPublicationNotReady(t *testing.T) {
	f, err := ipcfile.Create(testDir(t), "half", int32(ipc.KindPublication), publicationSections(4096, 4))
	require.NoError(t, err)
	defer f.Close()
	ctx := ctxT(t)
	short, cancel := contextWithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	_, err = OpenSubscription(short, f.Path())
	require.ErrorIs(t, err, ipc.ErrNotReady)
	meta, err := f.Section(1)
	require.NoError(t, err)
	meta[versionOffset] = 9
	_, err = OpenSubscription(ctx, f.Path())
	require.ErrorIs(t, err, ipc.ErrVersion)
	meta[versionOffset] = 1 // the layout before the packed slot state word
	_, err = OpenSubscription(ctx, f.Path())
	require.ErrorIs(t, err, ipc.ErrVersion)
	require.ErrorContains(t, err, fmt.Sprintf("layout version 1, this build reads %d", layoutVersion))
	meta[versionOffset] = byte(layoutVersion)
	_, err = OpenSubscription(ctx, f.Path())
	require.ErrorIs(t, err, ipc.ErrCorrupt, "version set, configuration zero")
}

func TestErrorsMatch(t *testing.T) {
	require.ErrorIs(t, ErrPublisherDead, ErrEndOfStream)
	require.False(t, errors.Is(ErrEndOfStream, ErrPublisherDead))
}

// TestLateJoinerOnClosedPublication: a subscriber that joins a closed
// publication starts where any other joiner would (Aeron's rule, as an
// Aeron IPC publication accepts subscriptions while it drains): at the
// slowest active subscriber's position. So with a subscriber still
// lagging it reads every message from there to the end of the stream and
// only then gets ErrEndOfStream; with no active subscriber it joins at the
// end and gets ErrEndOfStream at once.
func TestLateJoinerOnClosedPublication(t *testing.T) {
	p := newTestPublication(t, 4096)
	lagging := newTestSubscription(t, p)
	for _, m := range []string{"one", "two", "three"} {
		_, err := p.Offer(pubTypeID, []byte(m))
		require.NoError(t, err)
	}
	end := p.position()
	require.NoError(t, p.Close())

	drain := func(s *Subscription) (got []string, err error) {
		for range 10 {
			_, err = s.Poll(func(_ int32, b []byte) { got = append(got, string(b)) }, ringbuf.NoLimit)
			if err != nil {
				return got, err
			}
		}
		return got, nil
	}
	late, err := OpenSubscription(ctxT(t), lagging.file().Path())
	require.NoError(t, err)
	defer late.Close()
	require.Zero(t, late.joinedAt(), "joins at the lagging subscriber's position")
	got, err := drain(late)
	require.ErrorIs(t, err, ErrEndOfStream)
	require.Equal(t, []string{"one", "two", "three"}, got, "drains to the end first")

	got, err = drain(lagging)
	require.ErrorIs(t, err, ErrEndOfStream)
	require.Len(t, got, 3)
	require.NoError(t, lagging.Close())
	require.NoError(t, late.Close())

	last, err := OpenSubscription(ctxT(t), p.File().Path())
	require.NoError(t, err)
	defer last.Close()
	require.Equal(t, end, last.joinedAt(), "no active subscriber: joins at the end")
	got, err = drain(last)
	require.ErrorIs(t, err, ErrEndOfStream)
	require.Empty(t, got, "ends at once")
}

// TestOpenNotARegularFile: Open and OpenSubscription given a directory, a
// symbolic link to one, a link to itself or a socket fail at once with
// ipc.ErrNotDutyFile and the path, even when told to wait for the file (the
// file layer's rule, through the publication's entry points).
func TestOpenNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	require.NoError(t, os.Mkdir(sub, 0o700))
	link := filepath.Join(dir, "link-to-sub")
	require.NoError(t, os.Symlink(sub, link))
	loop := filepath.Join(dir, "loop")
	require.NoError(t, os.Symlink(loop, loop))
	paths := map[string]string{"directory": sub, "link to a directory": link, "link to itself": loop}
	if sock := filepath.Join(dir, "s"); len(sock) < 100 { // sun_path is about 104 bytes
		l, err := net.Listen("unix", sock)
		require.NoError(t, err)
		defer l.Close()
		paths["socket"] = sock
	}
	wait := WithFileOptions(ipc.WithWaitForFile())
	for what, path := range paths {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		p, err := Open(ctx, path, wait)
		if err == nil {
			_ = p.Close()
		}
		require.ErrorIs(t, err, ipc.ErrNotDutyFile, "Open: %s", what)
		require.ErrorContains(t, err, path)
		s, err := OpenSubscription(ctx, path, wait)
		if err == nil {
			_ = s.Close()
		}
		require.ErrorIs(t, err, ipc.ErrNotDutyFile, "OpenSubscription: %s", what)
		require.ErrorContains(t, err, path)
		cancel()
	}
}
