package publication

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/ringbuf"
)

// TestJoinerSlotFreedUnderIt: a joiner claims a free slot whose heartbeat
// word still holds the previous occupant's stale value, and an owner limit
// update runs before the joiner's first heartbeat store. That update used
// to free the "abandoned" joining slot; a second joiner took it and became
// active, and the first joiner then overwrote the second's registration id
// (and pid, start time, heartbeat): the second, properly joined and active,
// was told it was dropped. Now the owner judges a join abandoned only once
// its own first sight of the joining word is twice the subscriber timeout
// old too: the update leaves the slot alone, the second joiner takes
// another slot, and both work. The interleaving is forced through the
// first joiner's clock, which joinAt calls right between its slot CAS and
// its first store.
func TestJoinerSlotFreedUnderIt(t *testing.T) {
	clock := newFakeClock()
	p := newTestPublication(t, 4096, clock.opt(), WithSubscriberTimeout(time.Second))
	old := newTestSubscription(t, p, clock.opt())
	require.Equal(t, 0, old.slotIndex())
	clock.add(3 * time.Second) // old went silent: dropped, then freed
	require.NoError(t, p.Heartbeat(clock.now()))
	require.NoError(t, p.Heartbeat(clock.now()))
	require.Equal(t, int64(1), p.Stats().FreedSlots)

	var j2 *Subscription
	first := true
	j1Clock := func() int64 {
		if first { // j1 has claimed slot 0, not yet stored its heartbeat
			first = false
			require.NoError(t, p.Heartbeat(clock.now()))
			j2 = newTestSubscription(t, p, clock.opt())
		}
		return clock.now()
	}
	j1, err := OpenSubscription(ctxT(t), p.File().Path(), WithClock(millis(j1Clock)))
	require.NoError(t, err, "the owner did not take j1's fresh slot for an abandoned join")
	defer j1.Close()
	require.NotNil(t, j2)
	require.Equal(t, int64(1), p.Stats().FreedSlots)
	require.Equal(t, []int{0, 1}, []int{j1.slotIndex(), j2.slotIndex()})
	for _, s := range []*Subscription{j1, j2} {
		require.Equal(t, slotActive, slotStateOf(s.slot), "it holds the publisher back")
		require.Equal(t, s.registrationID(), slotRegistrationOf(s.slot))
	}
	_, err = p.Offer(pubTypeID, []byte("hello"))
	require.NoError(t, err)
	for _, s := range []*Subscription{j1, j2} {
		n, err := s.Poll(func(int32, []byte) {}, ringbuf.NoLimit)
		require.NoError(t, err, "slot %d: registration %d, the subscriber's %d", s.slotIndex(), slotRegistrationOf(s.slot), s.registrationID())
		require.Equal(t, 1, n)
	}
}

// TestJoinerOnFreshSlotNotFreed: the same through a slot never used
// (heartbeat 0): a second joiner raises the slots in use above the first
// joiner's slot before the first stores its heartbeat, and a limit update
// scans it.
func TestJoinerOnFreshSlotNotFreed(t *testing.T) {
	clock := newFakeClock()
	p := newTestPublication(t, 4096, clock.opt(), WithSubscriberTimeout(time.Second))
	var j2 *Subscription
	first := true
	j1Clock := func() int64 {
		if first { // j1 has claimed slot 0, not yet stored anything
			first = false
			j2 = newTestSubscription(t, p, clock.opt()) // slot 1: slots in use 2
			require.NoError(t, p.Heartbeat(clock.now()))
		}
		return clock.now()
	}
	j1, err := OpenSubscription(ctxT(t), p.File().Path(), WithClock(millis(j1Clock)))
	require.NoError(t, err)
	defer j1.Close()
	require.NotNil(t, j2)
	require.Equal(t, []int{0, 1}, []int{j1.slotIndex(), j2.slotIndex()})
	require.Zero(t, p.Stats().FreedSlots)
	require.Equal(t, 2, p.activeSubscriberCount())
}

// TestPausedJoinerLeavesReclaimedSlotAlone: a joiner that pauses between
// its slot CAS and its first store for longer than twice the subscriber
// timeout does lose the slot (the owner frees it as abandoned), and a
// second joiner takes it. When the first resumes it finds the slot's state
// word is no longer its own and gives up without writing the second's
// position or join position (its state word it could not write anyway:
// every change of the word is a CAS from a value with the holder's id).
func TestPausedJoinerLeavesReclaimedSlotAlone(t *testing.T) {
	clock := newFakeClock()
	p := newTestPublication(t, 4096, clock.opt(), WithSubscriberTimeout(time.Second))
	old := newTestSubscription(t, p, clock.opt())
	require.NoError(t, old.Close()) // slot 0 used once, free
	var j2 *Subscription
	first := true
	j1Clock := func() int64 {
		if first { // j1 has claimed slot 0 and pauses before its first store
			first = false
			require.NoError(t, p.Heartbeat(clock.now()))
			clock.add(3 * time.Second)
			require.NoError(t, p.Heartbeat(clock.now())) // frees the abandoned join
			require.Equal(t, int64(1), p.Stats().FreedSlots)
			j2 = newTestSubscription(t, p, clock.opt())
			// The publisher moves on, so that a late join position of j1
			// (the tail) would differ from j2's.
			_, err := p.Offer(pubTypeID, []byte("hello"))
			require.NoError(t, err)
		}
		return clock.now()
	}
	_, err := OpenSubscription(ctxT(t), p.File().Path(), WithClock(millis(j1Clock)))
	require.ErrorIs(t, err, ErrNoSubscriberSlot)
	t.Logf("paused joiner: %v", err)
	require.NotNil(t, j2)
	require.Equal(t, 0, j2.slotIndex())
	require.Equal(t, slotWord(j2.registrationID(), slotActive), slotWordOf(j2.slot))
	require.Equal(t, [2]int64{0, 0}, [2]int64{j2.slot.position.Load(), j2.slot.join.Load()},
		"j2's position and join position are its own")
	n, err := j2.Poll(func(int32, []byte) {}, ringbuf.NoLimit)
	require.NoError(t, err)
	require.Equal(t, 1, n)
}

// TestLateCloseFreesNewSubscribersSlot: Subscription.Close used to check
// the slot's registration, then load the state, then CAS that state to
// free. If, in between, the owner dropped and freed the slot and a new
// subscriber took it (state active again), the old subscriber's CAS
// active -> free succeeded and freed the new subscriber's slot. Now Close
// is one CAS of the state word, which holds the registration id, from its
// own exact value, and reads no clock. The interleaving is forced through
// the old subscriber's clock, which Close used to call between its load and
// its CAS ("inside Close": if Close reads no clock, the subscriber just
// closes its own slot), and, for a Close without that window, right before
// it, the latest point before its CAS ("before Close").
func TestLateCloseFreesNewSubscribersSlot(t *testing.T) {
	for _, inside := range []bool{true, false} {
		name := map[bool]string{true: "inside Close", false: "before Close"}[inside]
		t.Run(name, func(t *testing.T) {
			clock := newFakeClock()
			p := newTestPublication(t, 4096, clock.opt(), WithSubscriberTimeout(time.Second))
			var j2 *Subscription
			interleave := func() {
				clock.add(3 * time.Second)
				require.NoError(t, p.Heartbeat(clock.now())) // drop
				require.NoError(t, p.Heartbeat(clock.now())) // free
				j2 = newTestSubscription(t, p, clock.opt())
			}
			armed := false
			oldClock := func() int64 {
				if armed { // old is inside Close
					armed = false
					interleave()
				}
				return clock.now()
			}
			old := newTestSubscription(t, p, WithClock(millis(oldClock)))
			if inside {
				armed = true
			} else {
				interleave()
			}
			require.NoError(t, old.Close())
			if j2 == nil { // Close read no clock: no window inside it
				require.True(t, inside)
				require.Zero(t, p.activeSubscriberCount(), "the subscriber closed its own slot")
				require.Zero(t, slotWordOf(p.slot(old.slotIndex())))
				return
			}
			require.Equal(t, old.slotIndex(), j2.slotIndex())
			require.Equal(t, slotActive, slotStateOf(j2.slot), "the old subscriber's Close left the new one's slot alone")
			require.Equal(t, j2.registrationID(), slotRegistrationOf(j2.slot))
			require.Equal(t, 1, p.activeSubscriberCount())
		})
	}
}

// TestCloseFreesOwnSlot: Close frees the subscriber's own slot, active or
// dropped (not yet freed by the owner).
func TestCloseFreesOwnSlot(t *testing.T) {
	clock := newFakeClock()
	p := newTestPublication(t, 4096, clock.opt(), WithSubscriberTimeout(time.Second))
	a := newTestSubscription(t, p, clock.opt())
	b := newTestSubscription(t, p, clock.opt())
	clock.add(1500 * time.Millisecond)
	require.NoError(t, a.Heartbeat(clock.now()))
	require.NoError(t, p.Heartbeat(clock.now())) // b is dropped, not freed
	require.Equal(t, slotDropped, slotStateOf(b.slot))
	require.NoError(t, a.Close())
	require.NoError(t, b.Close())
	for _, i := range []int{a.slotIndex(), b.slotIndex()} {
		require.Zero(t, slotWordOf(p.slot(i)), "slot %d free", i)
	}
	require.Zero(t, p.Stats().FreedSlots, "freed by their holders, not by the owner")
}
