package publication

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/ipc"
	"github.com/dutyrt/duty/ringbuf"
)

// TestJoinAfterOwnerDiedMidUpdate: the owner is killed inside updateLimit,
// after it made the clean sequence odd and before it made it even again.
// Nobody will ever make it even: a subscriber that opens the publication
// afterwards used to spin until its context ended (forever with
// context.Background) and fail with ipc.ErrNotReady, although the same
// subscriber opening after the owner was killed at any other point joins
// and then reads ErrPublisherDead. With the owner provably gone no limit
// update can be running, so the joiner must not wait for one.
func TestJoinAfterOwnerDiedMidUpdate(t *testing.T) {
	clock := newFakeClock()
	p := newTestPublication(t, 4096, clock.opt(), WithSubscriberTimeout(time.Hour))
	s1 := newTestSubscription(t, p, clock.opt())
	_, err := p.Offer(pubTypeID, []byte("before"))
	require.NoError(t, err)

	p.cleanSeq.Add(1) // updateLimit's first store; the owner dies here
	markOwnerDead(t, p.File().Path())
	clock.add(time.Minute) // its heartbeat goes stale

	ctx, cancel := contextWithTimeout(ctxT(t), 3*time.Second)
	defer cancel()
	s2, err := OpenSubscription(ctx, p.File().Path(), clock.opt())
	require.NoError(t, err, "a joiner waited for a limit update of a dead owner")
	defer s2.Close()
	require.Equal(t, s1.Position(), s2.joinedAt())

	var got []string
	h := func(_ int32, b []byte) { got = append(got, string(b)) }
	_, err = s2.Poll(h, ringbuf.NoLimit)
	require.NoError(t, err)
	_, err = s2.Poll(h, ringbuf.NoLimit)
	require.ErrorIs(t, err, ErrPublisherDead)
	require.Equal(t, []string{"before"}, got)
}

// TestOpenPublicationWhoseCreatorIsGoneBeforeItsMetadata: Create
// creates the file (ready at the file layer) and then writes the
// publication metadata, version last. A creator killed in between, or one
// whose metadata write failed (Create then closes the file),
// leaves a publication whose version stays 0 for good. OpenSubscription
// and Open used to wait for it until their context ended
// (forever with context.Background) and then say ipc.ErrNotReady; with the
// creator provably gone they must say so at once (ipc.ErrOwnerDead).
func TestOpenPublicationWhoseCreatorIsGoneBeforeItsMetadata(t *testing.T) {
	// The check needs the clock: a nil one is an argument error here too,
	// as in Create and OpenSubscription.
	_, err := Open(ctxT(t), "unused", WithClock(nil))
	require.ErrorIs(t, err, ipc.ErrArgument)

	for _, how := range []string{"closed", "dead"} {
		t.Run(how, func(t *testing.T) {
			clock := newFakeClock()
			f, err := ipcfile.Create(testDir(t), "pub", int32(ipc.KindPublication), publicationSections(4096, 4))
			require.NoError(t, err)
			t.Cleanup(func() { _ = f.Close() })
			if how == "closed" {
				require.NoError(t, f.Close())
			} else {
				markOwnerDead(t, f.Path())
				clock.add(time.Minute)
			}
			ctx, cancel := contextWithTimeout(ctxT(t), 3*time.Second)
			defer cancel()
			_, err = OpenSubscription(ctx, f.Path(), clock.opt())
			require.ErrorIs(t, err, ipc.ErrOwnerDead)
			require.NoError(t, ctx.Err(), "OpenSubscription waited for its context")
			_, err = Open(ctx, f.Path(), clock.opt())
			require.ErrorIs(t, err, ipc.ErrOwnerDead)
			require.NoError(t, ctx.Err(), "Open waited for its context")
		})
	}
}

// TestJoinerKilledRightAfterItsSlotCAS: a joiner claims a slot (CAS of the
// state word 0 -> its id, joining) and is killed before its next stores.
// The owner scans only the slots below "slots in use", which the joiner
// used to raise only after those stores: the abandoned joining slot lay
// beyond the scan, was never freed, and with no higher slot left to claim
// (here the only one) no subscriber could ever join again
// (ErrNoSubscriberSlot). Abandoned joins are freed after twice the
// subscriber timeout, wherever the joiner died.
func TestJoinerKilledRightAfterItsSlotCAS(t *testing.T) {
	clock := newFakeClock()
	p := newTestPublication(t, 4096, clock.opt(), WithSubscriberTimeout(time.Second), withMaxSubscribers(1))

	// The joiner's clock runs right after its slot CAS: the process "dies"
	// there (its mapping stays, as a dead process's file stays).
	type died struct{}
	func() {
		defer func() { require.Equal(t, died{}, recover()) }()
		_, _ = OpenSubscription(ctxT(t), p.File().Path(), WithClock(millis(func() int64 { panic(died{}) })))
		t.Fatal("the joiner survived")
	}()
	require.Equal(t, slotJoining, slotStateOf(p.slot(0)))

	for range 3 { // the owner's duty cycle, well past twice the timeout
		require.NoError(t, p.Heartbeat(clock.now()))
		clock.add(2 * time.Second)
	}
	require.Equal(t, int64(1), p.Stats().FreedSlots, "the abandoned join was freed")
	s, err := OpenSubscription(ctxT(t), p.File().Path(), clock.opt())
	require.NoError(t, err)
	require.NoError(t, s.Close())
}
