package ipc

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/ringbuf"
)

// markOwnerDead makes the file's owner look dead to every process that
// opens the file from now on: its start time no longer matches its pid's
// (as after the owner died and the pid was reused). With a heartbeat
// stale on their clock, they see the file layer's Dead state.
func markOwnerDead(t testing.TB, p *Publication) {
	t.Helper()
	b := p.file.data[OwnerStartTimeOffset : OwnerStartTimeOffset+8]
	v := binary.LittleEndian.Uint64(b)
	require.NotZero(t, v)
	binary.LittleEndian.PutUint64(b, v+1)
}

// TestJoinAfterOwnerDiedMidUpdate: the owner is killed inside updateLimit,
// after it made the clean sequence odd and before it made it even again.
// Nobody will ever make it even: a subscriber that opens the publication
// afterwards used to spin until its context ended (forever with
// context.Background) and fail with ErrNotReady, although the same
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
	markOwnerDead(t, p)
	clock.add(time.Minute) // its heartbeat goes stale

	ctx, cancel := contextWithTimeout(ctxT(t), 3*time.Second)
	defer cancel()
	s2, err := OpenSubscription(ctx, p.File().Path(), clock.opt())
	require.NoError(t, err, "a joiner waited for a limit update of a dead owner")
	defer s2.Close()
	require.Equal(t, s1.Position(), s2.JoinPosition())

	var got []string
	h := func(_ int32, b []byte) { got = append(got, string(b)) }
	_, err = s2.Poll(h, ringbuf.NoLimit)
	require.NoError(t, err)
	_, err = s2.Poll(h, ringbuf.NoLimit)
	require.ErrorIs(t, err, ErrPublisherDead)
	require.Equal(t, []string{"before"}, got)
}

// TestOpenPublicationWhoseCreatorIsGoneBeforeItsMetadata: CreatePublication
// creates the file (ready at the file layer) and then writes the
// publication metadata, version last. A creator killed in between, or one
// whose metadata write failed (CreatePublication then closes the file),
// leaves a publication whose version stays 0 for good. OpenSubscription
// and OpenPublication used to wait for it until their context ended
// (forever with context.Background) and then say ErrNotReady; with the
// creator provably gone they must say so at once (ErrOwnerDead).
func TestOpenPublicationWhoseCreatorIsGoneBeforeItsMetadata(t *testing.T) {
	// The check needs the clock: a nil one is an argument error here too,
	// as in CreatePublication and OpenSubscription.
	_, err := OpenPublication(ctxT(t), "unused", WithMillisClock(nil))
	require.ErrorIs(t, err, ErrArgument)

	for _, how := range []string{"closed", "dead"} {
		t.Run(how, func(t *testing.T) {
			clock := newFakeClock()
			f, err := Create(testDir(t), "pub", KindPublication, publicationSections(4096, 4))
			require.NoError(t, err)
			t.Cleanup(func() { _ = f.Close() })
			if how == "closed" {
				require.NoError(t, f.Close())
			} else {
				b := f.data[OwnerStartTimeOffset : OwnerStartTimeOffset+8]
				binary.LittleEndian.PutUint64(b, binary.LittleEndian.Uint64(b)+1)
				clock.add(time.Minute)
			}
			ctx, cancel := contextWithTimeout(ctxT(t), 3*time.Second)
			defer cancel()
			_, err = OpenSubscription(ctx, f.Path(), clock.opt())
			require.ErrorIs(t, err, ErrOwnerDead)
			require.NoError(t, ctx.Err(), "OpenSubscription waited for its context")
			_, err = OpenPublication(ctx, f.Path(), clock.opt())
			require.ErrorIs(t, err, ErrOwnerDead)
			require.NoError(t, ctx.Err(), "OpenPublication waited for its context")
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
	p := newTestPublication(t, 4096, clock.opt(), WithSubscriberTimeout(time.Second), WithMaxSubscribers(1))

	// The joiner's clock runs right after its slot CAS: the process "dies"
	// there (its mapping stays, as a dead process's file stays).
	type died struct{}
	func() {
		defer func() { require.Equal(t, died{}, recover()) }()
		_, _ = OpenSubscription(ctxT(t), p.File().Path(), WithMillisClock(func() int64 { panic(died{}) }))
		t.Fatal("the joiner survived")
	}()
	require.Equal(t, SlotJoining, slotStateOf(p.slot(0)))

	for range 3 { // the owner's duty cycle, well past twice the timeout
		require.NoError(t, p.Heartbeat(clock.now()))
		clock.add(2 * time.Second)
	}
	require.Equal(t, int64(1), p.Stats().FreedSlots, "the abandoned join was freed")
	s, err := OpenSubscription(ctxT(t), p.File().Path(), clock.opt())
	require.NoError(t, err)
	require.NoError(t, s.Close())
}
