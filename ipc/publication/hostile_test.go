package publication

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty"
	"github.com/dutyrt/duty/internal/atomicbuf"
	"github.com/dutyrt/duty/internal/record"
	"github.com/dutyrt/duty/ipc"
	"github.com/dutyrt/duty/ringbuf"
)

// TestHostileCleanPositionIsCorrupt: the clean position is a word of the
// shared file, which any process mapping it can write. A value whose
// distance to the slowest subscriber overflows int64 (math.MinInt64) used
// to pass updateLimit's window check (the difference wrapped negative), and
// the owner then "zeroed" from there to the subscriber's position: the
// length wrapped too and zero sliced out of range, a panic in the owner's
// Heartbeat (or Offer). It must be ErrCorrupt, with the log intact.
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
	require.ErrorIs(t, err, ErrCorrupt)

	var got []string
	_, err = s.Poll(func(_ int32, b []byte) { got = append(got, string(b)) }, ringbuf.NoLimit)
	require.NoError(t, err)
	require.Equal(t, []string{"unread"}, got, "the subscriber's unread message was wiped")
}

// TestPublicationTimeoutBeyondADurationIsCorrupt: the metadata's
// timeouts are milliseconds, turned into a time.Duration. The bound
// wrapPublication checked (math.MaxInt64/4 ms) does not keep that product
// from overflowing: 2^58+1 ms wrapped to exactly 1 ms, so a subscriber
// opened a publication whose file says "unblock after 9 million years" and
// unblocked claims after 1 ms. No creator can write such a value (its
// options are Durations): it is ipc.ErrCorrupt, as for the file's liveness
// timeout (TestLivenessTimeoutBeyondADurationIsCorrupt).
func TestPublicationTimeoutBeyondADurationIsCorrupt(t *testing.T) {
	for _, off := range []int{subscriberTimeoutOffset, unblockTimeoutOffset} {
		t.Run(fmt.Sprint(off), func(t *testing.T) { testPublicationTimeoutBeyondADuration(t, off) })
	}
}

func testPublicationTimeoutBeyondADuration(t *testing.T, off int) {
	p := newTestPublication(t, 4096)
	meta, err := p.File().Section(1)
	require.NoError(t, err)
	const wraps = 1<<58 + 1 // * 1e6 ns = 2^64 * 15625 + 1e6: 1 ms
	require.Less(t, int64(wraps), int64(math.MaxInt64/4), "inside the old bound")
	binary.LittleEndian.PutUint64(meta[off:], wraps)
	s, err := OpenSubscription(ctxT(t), p.File().Path())
	if err == nil {
		defer s.Close()
		t.Fatalf("offset %d: opened, with a subscriber timeout of %d ms and an unblock timeout of %d ms",
			off, s.pf.subscriberTimeout, s.pf.unblockTimeout)
	}
	require.ErrorIs(t, err, ipc.ErrCorrupt)

	binary.LittleEndian.PutUint64(meta[off:], uint64(maxTimeoutMillis)) // the longest a creator can write
	s, err = OpenSubscription(ctxT(t), p.File().Path())
	require.NoError(t, err)
	require.NoError(t, s.Close())
}

// TestJoinWithCleanPositionBeyondTheTail: the clean position never passes
// the tail (it is the slowest subscriber's position, at most the tail). A
// joiner that found it beyond its join position retried until its context
// ended, so a clean position past the tail (a broken peer's store) made
// every OpenSubscription spin for its whole context (forever with
// context.Background) and then say ipc.ErrNotReady. It is ErrCorrupt, and
// the slot is left free.
func TestJoinWithCleanPositionBeyondTheTail(t *testing.T) {
	p := newTestPublication(t, 4096)
	_, err := p.Offer(pubTypeID, []byte("x"))
	require.True(t, err == nil || err == ErrNotConnected)
	p.cleanPos.Store(1 << 40)
	ctx, cancel := contextWithTimeout(ctxT(t), 3*time.Second)
	defer cancel()
	_, err = OpenSubscription(ctx, p.File().Path())
	require.ErrorIs(t, err, ErrCorrupt)
	require.NoError(t, ctx.Err(), "OpenSubscription waited for its context")
	require.Zero(t, p.slot(0).word.Load(), "the slot is free again")
}

// stalledAtClaim returns the set-up of newUnblockTest (the owner alive, no
// publisher opened by path: nothing is ever unblocked) whose subscriber has
// read messages up to position at (in the first lap, at least 16) and now
// stands at a claim of claimed bytes there, the tail moved past it and
// nothing written into it yet: the test writes a hostile header at the
// returned log index (equal to the position).
func stalledAtClaim(t *testing.T, at, claimed int) (*fakeClock, *Publication, *Subscription, int) {
	t.Helper()
	clock, p, s := newUnblockTest(t)
	for p.position() < int64(at) {
		_, err := p.Offer(pubTypeID, make([]byte, min(200, at-int(p.position())-ringbuf.HeaderLength)))
		require.NoError(t, err)
		_, err = s.Poll(func(int32, []byte) {}, ringbuf.NoLimit)
		require.NoError(t, err)
	}
	require.Equal(t, int64(at), s.Position())
	index, _, err := p.claim(claimed)
	require.NoError(t, err)
	require.Equal(t, at, index)
	return clock, p, s, index
}

// TestSubscriberCorruptionMatchesDutyErrCorrupt: a subscriber's corruption
// error matches ErrCorrupt and duty.ErrCorrupt, the marker every duty
// package's corruption sentinel matches.
func TestSubscriberCorruptionMatchesDutyErrCorrupt(t *testing.T) {
	_, p, s, index := stalledAtClaim(t, 16, 16)
	p.log.WordAt(index).Store(record.HeaderWord(4, pubTypeID)) // committed, shorter than its own header
	_, err := s.Poll(func(int32, []byte) {}, ringbuf.NoLimit)
	require.ErrorIs(t, err, ErrCorrupt)
	require.ErrorIs(t, err, duty.ErrCorrupt)
	require.ErrorIs(t, ErrCorrupt, duty.ErrCorrupt)
}

// TestCorruptRecordErrorNamesTheRecord: the error for a record no
// publisher writes names that record, its position and log index, length
// and type, not the position the poll started from (which it used to),
// also after a ControlledPoll Commit moved the poll's start.
func TestCorruptRecordErrorNamesTheRecord(t *testing.T) {
	for _, action := range []ringbuf.Action{ringbuf.Continue, ringbuf.Commit} {
		t.Run(fmt.Sprint(action), func(t *testing.T) {
			const capacity = 1024
			log := atomicbuf.Make(capacity).Bytes()
			encodeMessage(log, 64, 1, []byte("one"), 120) // [64, 80)
			encodeMessage(log, 80, 1, []byte("two"), 120) // [80, 96)
			binary.LittleEndian.PutUint64(log[96:], uint64(record.HeaderWord(5, 7)))
			start := int64(2*capacity + 64) // the third lap: positions and indexes differ
			var word atomic.Int64
			r := newLogReader(log, 128, 300, &word, start, unlimitedTail(), anUnblock())
			n, err := r.read(nil, func(int32, []byte) ringbuf.Action { return action }, ringbuf.NoLimit)
			require.Equal(t, 2, n)
			require.ErrorIs(t, err, ErrCorrupt)
			msg := err.Error()
			for _, want := range []string{"position 2144", "log index 96", "length 5", "type 0x7"} {
				require.Contains(t, msg, want)
			}
			require.NotContains(t, msg, fmt.Sprint(start), "the poll's start")
			require.Equal(t, start+32, r.pos, "the records before it are consumed")
		})
	}
}

// TestImpossibleClaimMarkerIsCorrupt: a negative length at the position is
// an open claim only in the forms publishers write it (docs/publication.md, "End
// of stream and failures"). Any other negative header stopped the
// subscriber there for good while the owner lived (no unblock: Poll said
// (0, nil) on every call, and the publisher was back-pressured once the
// window filled). It is ErrCorrupt at the first poll that stops there,
// naming the record; the position does not move.
func TestImpossibleClaimMarkerIsCorrupt(t *testing.T) {
	// newUnblockTest's publication: capacity 4096, MTU 512, max message
	// 512, so a fragmented message's claim is 512 + 16 bytes.
	const frag = pubTypeID | fragmentFlag | beginFlag
	for _, c := range []struct {
		name           string
		at, claimed    int // the subscriber's position (index), the claim there
		length, typeID int32
	}{
		{"shorter than a header", 16, 16, -4, pubTypeID},
		{"one byte", 16, 16, -1, pubTypeID},
		{"below minus the capacity", 16, 16, -(4096 + 8), pubTypeID},
		{"most negative", 16, 16, math.MinInt32, pubTypeID},
		{"plain beyond the MTU", 16, 528, -520, pubTypeID},
		{"past the end of the log", 4032, 64, -128, pubTypeID},
		{"past the tail", 16, 16, -48, pubTypeID},
		{"type 0", 16, 16, -16, 0},
		{"negative type", 16, 16, -16, -2},
		{"padding short of the end of the log", 16, 16, -16, record.PaddingTypeID},
		{"fragmented, beyond the max message", 16, 544, -544, frag},
		{"fragmented, not a claim size", 16, 528, -520, frag},
		{"fragmented, misaligned", 16, 528, -527, frag},
		{"fragmented, no longer than the MTU", 16, 512, -512, frag},
		{"fragment with END", 16, 528, -528, frag | endFlag},
		{"fragment without BEGIN", 16, 528, -528, pubTypeID | fragmentFlag},
		{"a type without a length", 16, 16, 0, pubTypeID},
	} {
		t.Run(c.name, func(t *testing.T) {
			clock, p, s, index := stalledAtClaim(t, c.at, c.claimed)
			p.log.WordAt(index).Store(record.HeaderWord(int(c.length), c.typeID))
			got, err := pollWhileAdvancing(s, clock) // 20 minutes: far past the unblock timeout
			require.Empty(t, got)
			require.ErrorIs(t, err, ErrCorrupt, "the subscriber waits for good at a claim no publisher makes")
			require.ErrorIs(t, err, duty.ErrCorrupt)
			for _, want := range []string{
				fmt.Sprintf("position %d", index), fmt.Sprintf("log index %d", index),
				fmt.Sprintf("length %d", c.length), fmt.Sprintf("type %#x", c.typeID),
			} {
				require.Contains(t, err.Error(), want)
			}
			require.Equal(t, int64(index), s.Position())
		})
	}
}

// TestPossibleClaimMarkersWait: the open claims publishers do write, the
// smallest (an empty message, -8) and largest plain claim, a fragmented
// message's claim and the padding to the end of the log, are waited for
// while the owner lives and no publisher was opened by path, whatever the
// time, and unblocked after the unblock timeout once one was.
func TestPossibleClaimMarkersWait(t *testing.T) {
	const frag = pubTypeID | fragmentFlag | beginFlag
	for _, c := range []struct {
		name           string
		at, claimed    int
		length, typeID int32
	}{
		{"empty message", 16, 8, -8, pubTypeID},
		{"nothing written yet", 16, 16, 0, 0},
		{"plain at the MTU", 16, 512, -512, pubTypeID},
		{"fragmented", 16, 528, -528, frag},
		{"padding to the end of the log", 4032, 64, -64, record.PaddingTypeID},
	} {
		t.Run(c.name, func(t *testing.T) {
			clock, p, s, index := stalledAtClaim(t, c.at, c.claimed)
			p.log.WordAt(index).Store(record.HeaderWord(int(c.length), c.typeID))
			got, err := pollWhileAdvancing(s, clock)
			require.NoError(t, err)
			require.Empty(t, got)
			require.Equal(t, int64(index), s.Position(), "waits at the claim")
			require.Zero(t, p.Stats().UnblockedClaims)

			openTestPublisher(t, p, clock)               // now any claim may be a publisher's that stalled
			_, err = p.Offer(pubTypeID, []byte("after")) // a zero claim is padded up to a header
			require.NoError(t, err)
			got, err = pollWhileAdvancing(s, clock)
			require.NoError(t, err)
			require.Equal(t, []string{"after"}, got)
			require.Equal(t, int64(1), p.Stats().UnblockedClaims)
			require.Equal(t, p.position(), s.Position(), "past the claim, at the tail")
		})
	}
}

// TestGarbageTailIsCorrupt: the tail word is one a publisher stores only
// by CAS to the end of its claim (8-aligned, at most the max position) or
// by sealing it (sealedBit). Seen by a subscriber it is never behind the
// subscriber's position (every record it read ended at or before it) nor
// more than a lap ahead (the limit keeps publishers within a window of
// every active subscriber). Any other word stopped every subscriber for
// good while the owner lived: Poll said (0, nil) on every call (or, sealed
// behind the position, ErrEndOfStream). It is ErrCorrupt, naming the
// word; the log is left alone, and with the tail restored the subscriber
// reads on.
func TestGarbageTailIsCorrupt(t *testing.T) {
	const capacity = 4096
	nearMax := maxPositionFor(capacity) - 64
	for _, c := range []struct {
		name string
		base int64 // where the publication starts (as if it had run that long)
		tail func(pos int64) int64
	}{
		{"behind the position", 0, func(pos int64) int64 { return pos - 8 }},
		{"sealed behind the position", 0, func(pos int64) int64 { return (pos - 8) | sealedBit }},
		{"misaligned", 0, func(pos int64) int64 { return pos + 4 }},
		{"misaligned, sealed", 0, func(pos int64) int64 { return (pos + 4) | sealedBit }},
		{"more than a lap ahead", 0, func(pos int64) int64 { return pos + capacity + 8 }},
		{"bit 63", 0, func(pos int64) int64 { return pos | math.MinInt64 }},
		{"bit 61", 0, func(pos int64) int64 { return pos | 1<<61 }},
		{"beyond the max position", nearMax, func(int64) int64 { return maxPositionFor(capacity) + 8 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			clock := newFakeClock()
			p := newTestPublication(t, capacity, clock.opt(), withUnblockTimeout(time.Second), WithSubscriberTimeout(time.Hour))
			p.tail.Store(c.base)
			p.cleanPos.Store(c.base)
			p.limit.Store(c.base)
			s := newTestSubscription(t, p, clock.opt())
			_, err := p.Offer(pubTypeID, []byte("before"))
			require.NoError(t, err)
			got, err := pollWhileAdvancing(s, clock)
			require.NoError(t, err)
			require.Equal(t, []string{"before"}, got)
			pos, good := s.Position(), p.tail.Load()
			require.Equal(t, c.base+16, pos)

			bad := c.tail(pos)
			p.tail.Store(bad)                       // a broken peer's store
			got, err = pollWhileAdvancing(s, clock) // 20 minutes: far past the unblock timeout
			require.Empty(t, got)
			require.ErrorIs(t, err, ErrCorrupt, "the subscriber waits for good under a tail no publisher stores")
			require.ErrorIs(t, err, duty.ErrCorrupt)
			require.Contains(t, err.Error(), fmt.Sprintf("tail word %#x", bad))
			require.Equal(t, pos, s.Position())

			p.tail.Store(good)
			_, err = p.Offer(pubTypeID, []byte("after"))
			require.NoError(t, err)
			got, err = pollWhileAdvancing(s, clock)
			require.NoError(t, err)
			require.Equal(t, []string{"after"}, got)
		})
	}
}

// TestFragmentOfTypeZeroIsCorrupt: a fragmented message's records carry
// its type (1 .. MaxTypeID) under the fragment flags. A first fragment
// whose type bits are 0 was reassembled and delivered as a message of type
// 0, which no publisher sends (FuzzSubscriptionReader found it). It is
// ErrCorrupt, as a record of type 0 is, and nothing is delivered.
func TestFragmentOfTypeZeroIsCorrupt(t *testing.T) {
	for _, flags := range []int32{fragmentFlag | beginFlag | endFlag, fragmentFlag | beginFlag} {
		t.Run(fmt.Sprintf("%#x", flags), func(t *testing.T) {
			log := atomicbuf.Make(1024).Bytes()
			binary.LittleEndian.PutUint64(log[0:], uint64(record.HeaderWord(48, flags)))
			binary.LittleEndian.PutUint64(log[48:], uint64(record.HeaderWord(16, fragmentFlag|endFlag)))
			var word atomic.Int64
			r := newLogReader(log, 128, 300, &word, 0, unlimitedTail(), anUnblock())
			var types []int32
			n, err := r.read(func(typeID int32, _ []byte) { types = append(types, typeID) }, nil, ringbuf.NoLimit)
			require.Zero(t, n)
			require.Empty(t, types)
			require.ErrorIs(t, err, ErrCorrupt)
			require.ErrorIs(t, err, duty.ErrCorrupt)
			require.Contains(t, err.Error(), fmt.Sprintf("type %#x", flags))
			require.Zero(t, r.pos)
		})
	}
}

// TestReservedTypeBitsAreDropped: type ids end at MaxTypeID (2^24-1, the
// record core's scheme); bits 24 to 26 are reserved and bit 27 is the
// mailbox's checksum flag, and no publisher sets them (Offer refuses such a
// type). A record that carries one, plain or as
// a first fragment, is skipped and counted as dropped, never delivered
// (it used to be a valid type below the fragment flags); the message after
// it is delivered.
func TestReservedTypeBitsAreDropped(t *testing.T) {
	for _, typeID := range []int32{1 << 24, pubTypeID | 1<<27, pubTypeID | fragmentFlag | beginFlag | endFlag | 1<<25} {
		t.Run(fmt.Sprintf("%#x", typeID), func(t *testing.T) {
			log := atomicbuf.Make(1024).Bytes()
			binary.LittleEndian.PutUint64(log[0:], uint64(record.HeaderWord(16, typeID)))
			binary.LittleEndian.PutUint64(log[16:], uint64(record.HeaderWord(13, pubTypeID)))
			copy(log[24:], "after")
			var word atomic.Int64
			r := newLogReader(log, 128, 300, &word, 0, unlimitedTail(), anUnblock())
			var got []string
			n, err := r.read(func(typeID int32, p []byte) {
				require.Equal(t, int32(pubTypeID), typeID)
				got = append(got, string(p))
			}, nil, ringbuf.NoLimit)
			require.NoError(t, err)
			require.Equal(t, 1, n)
			require.Equal(t, []string{"after"}, got)
			require.Equal(t, int64(1), r.dropped)
			require.Equal(t, int64(32), r.pos)
		})
	}
	p := newTestPublication(t, 1024)
	_, err := p.Offer(maxTypeID+1, nil)
	require.ErrorIs(t, err, ringbuf.ErrTypeID)
}
