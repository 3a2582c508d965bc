package mailbox

import (
	"testing"
	"time"

	"github.com/dutyrt/duty/agent"
	"github.com/stretchr/testify/require"
)

func TestNewActorValidation(t *testing.T) {
	mb := newMailbox(t, Config{})
	h := func(*Message) Action { return Continue }
	_, err := NewActor("a", nil, h)
	require.ErrorIs(t, err, ErrArgument)
	_, err = NewActor("a", mb, nil)
	require.ErrorIs(t, err, ErrArgument)
	_, err = NewActor("a", mb, h, WithDrainLimit(0))
	require.ErrorIs(t, err, ErrArgument)
	_, err = NewActor("a", mb, h, WithCloseMode(0))
	require.ErrorIs(t, err, ErrArgument)
}

func TestActorDutyCycle(t *testing.T) {
	var clock testClock
	clock.Store(int64(1000 * time.Millisecond))
	mb := newMailbox(t, Config{HeartbeatCycles: 3, Clock: &clock})
	var seen []int32
	a, err := NewActor("worker", mb, func(m *Message) Action {
		seen = append(seen, m.TypeID())
		clock.Add(int64(time.Millisecond))
		return Continue
	}, WithDrainLimit(2))
	require.NoError(t, err)
	require.Equal(t, "worker", a.RoleName())
	require.Same(t, mb, a.(*actor).mb)
	inv, err := agent.NewInvoker(a)
	require.NoError(t, err)
	require.NoError(t, inv.Start())
	require.Equal(t, int64(1000), RingOf(mb).ConsumerHeartbeatTime())
	for i := range 5 {
		require.NoError(t, mb.Send(int32(i+1), nil))
	}
	counts := []int{}
	for range 4 {
		n, err := inv.Invoke()
		require.NoError(t, err)
		counts = append(counts, n)
	}
	require.Equal(t, []int{2, 2, 1, 0}, counts)
	require.Equal(t, []int32{1, 2, 3, 4, 5}, seen)
	require.Equal(t, int64(1004), RingOf(mb).ConsumerHeartbeatTime(), "heartbeat on the third cycle, after four deliveries")
	require.NoError(t, inv.Close())
	require.ErrorIs(t, mb.Err(), ErrClosed)
}

func TestActorCloseDrainsQueue(t *testing.T) {
	mb := newMailbox(t, Config{})
	n := 0
	a, err := NewActor("a", mb, func(*Message) Action { n++; return Continue }, WithDrainLimit(1))
	require.NoError(t, err)
	for range 600 {
		require.NoError(t, mb.Send(1, []byte("x")))
	}
	require.NoError(t, a.OnClose())
	require.Equal(t, 600, n)
	require.Equal(t, ErrClosed, mb.Send(1, nil))
}

func TestActorCloseReportsWhatIsLeft(t *testing.T) {
	mb := newMailbox(t, Config{})
	a, err := NewActor("stuck", mb, func(*Message) Action { return Abort })
	require.NoError(t, err)
	require.NoError(t, mb.Send(1, nil))
	err = a.OnClose()
	require.ErrorIs(t, err, ErrNotDrained)
	require.Contains(t, err.Error(), "stuck")
	require.Equal(t, 8, mb.Stats().Depth, "nothing dropped")
}

// A drain-mode close that finds a corrupt frame and leaves a message
// behind reports both.
func TestActorCloseReportsCorruptFrameAndWhatIsLeft(t *testing.T) {
	mb := newMailbox(t, Config{})
	a, err := NewActor("both", mb, func(*Message) Action { return Abort })
	require.NoError(t, err)
	writeBatch(t, RingOf(mb), []rec{{MaxTypeID + 1, []byte("x")}}) // reserved type bits
	require.NoError(t, mb.Send(1, nil))
	err = a.OnClose()
	require.ErrorIs(t, err, ErrNotDrained)
	require.ErrorIs(t, err, ErrCorruptFrame)
	require.Equal(t, int64(1), mb.Stats().Corrupt)
}

func TestActorCloseDiscards(t *testing.T) {
	mb := newMailbox(t, Config{})
	a, err := NewActor("d", mb, func(*Message) Action {
		t.Fatal("discarded messages are not delivered")
		return Continue
	}, WithCloseMode(Discard))
	require.NoError(t, err)
	for range 7 {
		require.NoError(t, mb.SendParts(1, []byte("a"), []byte("b")))
	}
	require.NoError(t, a.OnClose())
	require.Equal(t, 7, a.(*actor).discarded)
	require.Equal(t, int64(7), mb.Stats().Discarded)
}

func TestActorEndsAtEndOfStream(t *testing.T) {
	for _, stay := range []bool{false, true} {
		mb := newMailbox(t, Config{})
		var got []int32
		opts := []ActorOption{}
		if stay {
			opts = append(opts, WithEndOfStream(false))
		}
		a, err := NewActor("a", mb, func(m *Message) Action { got = append(got, m.TypeID()); return Continue }, opts...)
		require.NoError(t, err)
		inv, err := agent.NewInvoker(a)
		require.NoError(t, err)
		require.NoError(t, inv.Start())
		require.NoError(t, mb.Send(1, nil))
		require.NoError(t, mb.Send(2, nil))
		_, err = mb.Close(Drain)
		require.NoError(t, err)
		require.ErrorIs(t, mb.Send(3, nil), ErrClosed)
		var last error
		for range 200 { // an idle actor drains every 64 cycles
			if _, last = inv.Invoke(); last != nil {
				break
			}
		}
		require.Equal(t, []int32{1, 2}, got, "what was queued is delivered first")
		if stay {
			require.NoError(t, last)
		} else {
			require.ErrorIs(t, last, agent.ErrDone)
		}
		require.NoError(t, inv.Close())
	}
}
