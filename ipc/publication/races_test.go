package publication

import (
	"encoding/binary"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/atomicbuf"
	"github.com/dutyrt/duty/internal/record"
	"github.com/dutyrt/duty/ringbuf"
)

// TestUnblockedClaimStaysPadding: a publisher stalls inside a claim for
// longer than the unblock timeout; a subscriber turns the claim into
// padding; the publisher then resumes. Nothing it writes afterwards may
// revive the claim: the claim marker carries the type in the same store
// (mark), so after the marker there is no header store left that could
// overwrite the padding type, and the late Commit fails. (With the type
// stored after the length, a stall between the two stores let the late type
// store turn the padding back into a record whose payload was never
// written, and subscribers delivered it.)
func TestUnblockedClaimStaysPadding(t *testing.T) {
	clock, p, s := newUnblockTest(t)
	q := openTestPublisher(t, p, clock)
	require.NoError(t, p.Heartbeat(clock.now()))

	// q.TryClaim(pubTypeID, 32), stalled right after its marker.
	const n = 32
	index, _, err := q.claim(record.Size(n))
	require.NoError(t, err)
	q.mark(index, n+ringbuf.HeaderLength, pubTypeID)
	require.Equal(t, record.Marker(int(n), pubTypeID), q.log.WordAt(index).Load(),
		"one store: the negated length and the type together")

	var got [][]byte
	h := func(_ int32, b []byte) { got = append(got, append([]byte(nil), b...)) }
	_, err = s.Poll(h, ringbuf.NoLimit)
	require.NoError(t, err)
	clock.add(2 * time.Second)
	_, err = s.Poll(h, ringbuf.NoLimit) // unblocks: the claim is padding now
	require.NoError(t, err)
	require.Equal(t, int64(1), p.Stats().UnblockedClaims)

	// q resumes: fills the payload and commits.
	claim := Claim{Payload: q.log.Bytes()[index+8 : index+8+n], p: q, index: index, length: n + 8, typeID: pubTypeID}
	copy(claim.Payload, "late payload")
	require.ErrorIs(t, claim.Commit(), ErrClaimState)
	_, err = s.Poll(h, ringbuf.NoLimit)
	require.NoError(t, err)
	require.Empty(t, got, "the unblocked claim is lost (padding), never delivered")
}

// TestReassembleDoesNotRereadTheFirstHeader: read validates the first
// record of a fragmented message and hands its length to reassemble. The
// word can change after that check (the owner zeroes the space of a
// dropped subscriber, a publisher laps it, a broken peer writes it), so
// reassemble must not load it again and slice with what it finds: that
// was an out-of-range panic.
func TestReassembleDoesNotRereadTheFirstHeader(t *testing.T) {
	const capacity, mtu, maxMessage = 4096, 72, 600
	for name, changed := range map[string]uint32{"zeroed": 0, "lapped by a longer record": 200} {
		t.Run(name, func(t *testing.T) {
			log := atomicbuf.Make(capacity).Bytes()
			at := capacity - 2*mtu // the message's two records end at the log's end
			encodeMessage(log, at, 3, make([]byte, 100), mtu-8)
			var word atomic.Int64
			r := newLogReader(log, mtu, maxMessage, &word, int64(at), unlimitedTail(), anUnblock())
			length := int32(binary.LittleEndian.Uint32(log[at:]))
			typeID := int32(binary.LittleEndian.Uint32(log[at+4:]))
			require.True(t, record.Check(at, capacity, length, typeID)) // what read() validated
			first := record.Align(int(length))
			binary.LittleEndian.PutUint32(log[at:], changed) // ... and then the word changes
			require.NotPanics(t, func() { r.reassemble(at, typeID, length, first) })
		})
	}
}

// TestReadSurvivesAFlickeringFirstHeader drives the same race through
// read: another goroutine keeps zeroing and restoring the first header.
func TestReadSurvivesAFlickeringFirstHeader(t *testing.T) {
	const capacity, mtu, maxMessage = 4096, 72, 600
	log := atomicbuf.Make(capacity).Bytes()
	encodeMessage(log, 0, 3, make([]byte, 100), mtu-8)
	hdr := (*atomic.Int32)(unsafe.Pointer(&log[0]))
	valid := hdr.Load()
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !stop.Load() {
			hdr.Store(0)
			hdr.Store(valid)
		}
	}()
	defer func() { stop.Store(true); <-done }()
	var word atomic.Int64
	for i := range 20000 {
		r := newLogReader(log, mtu, maxMessage, &word, 0, unlimitedTail(), anUnblock())
		var perr any
		func() {
			defer func() { perr = recover() }()
			_, _ = r.read(func(int32, []byte) {}, nil, 1)
		}()
		require.Nil(t, perr, "read panicked after %d rounds", i)
	}
}

// TestCleanCloseIsNotADeath: a subscriber loads the tail (not sealed yet),
// then the owner seals and closes, then the subscriber finds the owner's
// heartbeat closed. That is an end of stream (ErrEndOfStream exactly), not
// ErrPublisherDead, which it used to report, for good.
func TestCleanCloseIsNotADeath(t *testing.T) {
	clock := newFakeClock()
	p := newTestPublication(t, 4096, clock.opt())
	s := newTestSubscription(t, p, clock.opt())
	_, err := p.Offer(pubTypeID, []byte("last"))
	require.NoError(t, err)
	n, err := s.Poll(func(int32, []byte) {}, ringbuf.NoLimit)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	stale := s.pf.tail.Load() // what the subscriber loaded before the Close
	require.Zero(t, stale&sealedBit)
	require.NoError(t, p.Close())
	require.Equal(t, ErrEndOfStream, s.idleAt(clock.now(), stale))
	_, err = s.Poll(func(int32, []byte) {}, ringbuf.NoLimit)
	require.Equal(t, ErrEndOfStream, err, "and it stays an end of stream")
}

// TestSubscriptionAccessorsAfterClose: after Close has released the
// mapping, the accessors report what they were at Close instead of reading
// unmapped memory (a fault that kills the process).
func TestSubscriptionAccessorsAfterClose(t *testing.T) {
	p := newTestPublication(t, 4096)
	s := newTestSubscription(t, p)
	_, err := p.Offer(pubTypeID, []byte("one"))
	require.NoError(t, err)
	n, err := s.Poll(func(int32, []byte) {}, ringbuf.NoLimit)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.NoError(t, p.Close()) // sealed: s is at the end of the stream
	pos := s.Position()
	require.Positive(t, pos)
	require.True(t, s.isEndOfStream())
	require.NoError(t, s.Close())
	require.Zero(t, ipcfile.Refs(s.file()), "the mapping is released")
	require.Equal(t, pos, s.Position())
	require.Zero(t, s.DroppedMessages())
	require.True(t, s.isEndOfStream())
	require.Zero(t, s.PublicationStats())
}

// TestPublicationAccessorsAfterClose: once Close has closed the file, the
// accessors that read the mapping report the values Close saw last instead
// of faulting on the released mapping.
func TestPublicationAccessorsAfterClose(t *testing.T) {
	p := newTestPublication(t, 4096)
	s := newTestSubscription(t, p)
	require.NoError(t, p.Heartbeat(epochMillis()))
	_, err := p.Offer(pubTypeID, []byte("one"))
	require.NoError(t, err)
	pos, limit := p.position(), p.publisherLimit()
	require.Positive(t, pos)
	require.True(t, p.isConnected())
	require.Equal(t, 1, p.activeSubscriberCount())
	require.NoError(t, p.Close())
	require.NoError(t, s.Close())
	require.Zero(t, ipcfile.Refs(p.File()), "the mapping is released")
	require.Equal(t, pos, p.position())
	require.Equal(t, limit, p.publisherLimit())
	require.True(t, p.isConnected())
	require.Equal(t, 1, p.activeSubscriberCount(), "as Close saw it")
}
