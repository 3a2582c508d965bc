package publication

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
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
	for p.position() < 4096 { // a lap, up to the end of the log
		_, err := p.Offer(pubTypeID, make([]byte, min(200, 4096-int(p.position())-8)))
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
	require.Equal(t, int64(32), b.joinedAt(), "the joiner starts at the open claim")
	require.Equal(t, `40:"\x10\x00\x00\x00\x05\x00\x00\x00STALE!!!"`, got[0])
	require.Equal(t, p.position(), b.Position())
}

// TestJoinWhileOwnerAlwaysUpdating: an owner that spins on Offer against a
// full limit runs updateLimit on every offer, back to back, so the clean
// sequence is odd nearly all the time. The joiner used to wait for a moment
// with no update running, both before it computed its join position and
// after it activated its slot: it got through only by luck, and not at all
// when every look it took fell inside an update. Here the joiner's own
// clock, which it reads once per attempt, plays that owner without timing:
// each reading finishes the update that was running and starts the next
// (the clean position does not move, as when no subscriber moves), so every
// look the joiner takes falls inside an update, while updates do finish.
// The join used to fail with ipc.ErrNotReady when its context ended (a hang
// guard here); the joiner now waits only for the update running at its
// activation to finish.
func TestJoinWhileOwnerAlwaysUpdating(t *testing.T) {
	p := newTestPublication(t, 4096, WithSubscriberTimeout(time.Hour))
	a := newTestSubscription(t, p)
	_, err := p.Offer(pubTypeID, []byte("before"))
	require.NoError(t, err)

	var updates atomic.Int64
	busyOwner := func() int64 {
		if p.cleanSeq.Load()&1 != 0 {
			p.cleanSeq.Add(1) // the running update finishes
		}
		p.cleanSeq.Add(1) // the next one starts
		updates.Add(1)
		return time.Now().UnixMilli()
	}
	ctx, cancel := contextWithTimeout(ctxT(t), 5*time.Second)
	defer cancel()
	b, err := OpenSubscription(ctx, p.File().Path(), WithClock(millis(busyOwner)))
	require.NoError(t, err, "a joiner starved by an owner that is always updating (%d updates)", updates.Load())
	defer b.Close()
	require.Equal(t, a.Position(), b.joinedAt())
	p.cleanSeq.Add(1) // the last update finishes
	require.Zero(t, p.cleanSeq.Load()&1)

	var got []string
	_, err = b.Poll(func(_ int32, m []byte) { got = append(got, string(m)) }, ringbuf.NoLimit)
	require.NoError(t, err)
	require.Equal(t, []string{"before"}, got)
	require.Equal(t, 2, p.activeSubscriberCount())
}

// TestJoinWhileOwnerSpinsOverLimit: the real thing, with goroutines: two
// goroutines of the owner offer against a full limit without pause (each
// offer runs a limit update, or finds one running: ErrAdminAction) while
// subscribers join one after the other; every join succeeds (the context is
// a hang guard), and each joiner starts at the slowest subscriber's
// position. With 64 slots in use the update's scan is long, so the clean
// sequence is odd most of the time; before the joiner waited only for the
// update running at its activation, such joins took thousands of attempts.
func TestJoinWhileOwnerSpinsOverLimit(t *testing.T) {
	p := newTestPublication(t, 64<<10, WithSubscriberTimeout(time.Hour), withMaxSubscribers(80))
	slow := newTestSubscription(t, p)
	for range 63 {
		newTestSubscription(t, p)
	}
	for {
		_, err := p.Offer(pubTypeID, make([]byte, 100))
		if errors.Is(err, ErrBackPressured) {
			break
		}
		require.NoError(t, err)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 100)
			for !stop.Load() {
				if _, err := p.Offer(pubTypeID, buf); err != ErrBackPressured && err != ErrAdminAction {
					errs <- err
					return
				}
			}
		}()
	}
	defer func() { stop.Store(true); wg.Wait() }()
	for i := range 10 {
		ctx, cancel := contextWithTimeout(ctxT(t), 30*time.Second)
		s, err := OpenSubscription(ctx, p.File().Path())
		cancel()
		require.NoError(t, err, "join %d", i)
		require.Equal(t, slow.Position(), s.joinedAt())
		require.NoError(t, s.Close())
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err, "an offer")
	}
}

// TestLateClaimBytesNotReadALapLater: residual risk (1) of docs/publication.md
// ("Why the unblock is safe"). With a publisher opened by path, subscribers
// unblock a claim after the unblock timeout alone, whoever holds it. A
// publisher that was only stalled, not dead, then writes its payload late,
// after the owner has cleaned (zeroed) that space behind the subscribers:
// its Commit fails, but its bytes stay there, where "length 0 = not
// written yet" no longer holds. A lap later a subscriber waiting at the
// tail finds them where the next record will go. The record header carries
// no position to check them against, but a record always ends at or before
// the tail (its claim moved the tail first): the subscriber reads nothing
// past the tail, and the late bytes stay unread until a claim covers them
// and overwrites them. Before that check the subscriber delivered them, a
// message nobody sent, and went past the tail.
func TestLateClaimBytesNotReadALapLater(t *testing.T) {
	clock, p, s := newUnblockTest(t)
	q := openTestPublisher(t, p, clock)
	require.NoError(t, p.Heartbeat(clock.now())) // the limit, for q
	c, err := q.TryClaim(pubTypeID, 40)          // [0, 48), the stalled publisher's
	require.NoError(t, err)
	_, err = p.Offer(pubTypeID, []byte("after"))
	require.NoError(t, err)

	var got []string
	h := func(_ int32, m []byte) { got = append(got, fmt.Sprintf("%d:%q", len(m), m[:min(len(m), 16)])) }
	got, err = pollWhileAdvancing(s, clock) // stalls at the claim, unblocks it, reads "after"
	require.NoError(t, err)
	require.Equal(t, []string{"after"}, got)
	require.Equal(t, int64(1), p.Stats().UnblockedClaims)
	require.NoError(t, p.Heartbeat(clock.now())) // cleans [0, s's position)
	require.Equal(t, s.Position(), p.Stats().CleanPosition)

	// The publisher resumes and writes its payload, which (as any payload
	// may) starts with bytes that read as a record header.
	binary.LittleEndian.PutUint32(c.Payload[0:], 16)
	binary.LittleEndian.PutUint32(c.Payload[4:], pubTypeID)
	copy(c.Payload[8:], "STALE!!!")
	require.ErrorIs(t, c.Commit(), ErrClaimState)

	got = nil
	for p.position() < 4096 { // the rest of the lap
		_, err := p.Offer(pubTypeID, make([]byte, min(200, 4096-int(p.position())-8)))
		require.NoError(t, err)
		_, err = s.Poll(h, ringbuf.NoLimit)
		require.NoError(t, err)
	}
	_, err = p.Offer(pubTypeID, nil) // [4096, 4104): index 0..8; the tail is at index 8
	require.NoError(t, err)
	for range 2 {
		_, err = s.Poll(h, ringbuf.NoLimit)
		require.NoError(t, err)
	}
	require.Equal(t, `0:""`, got[len(got)-1], "the last message sent")
	for _, m := range got {
		require.NotContains(t, m, "STALE", "the late bytes, read as a message nobody sent")
	}
	require.Equal(t, p.position(), s.Position(), "the subscriber stops at the tail")

	// The next claim covers the late bytes and overwrites them.
	_, err = p.Offer(pubTypeID, []byte("next"))
	require.NoError(t, err)
	got = nil
	_, err = s.Poll(h, ringbuf.NoLimit)
	require.NoError(t, err)
	require.Equal(t, []string{`4:"next"`}, got)
	require.Equal(t, p.position(), s.Position())
}
