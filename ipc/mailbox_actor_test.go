package ipc

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/mailbox"
)

// TestMailboxActorKeepsFileAlive: an actor run past the liveness timeout
// keeps the file's owner heartbeat fresh (File.OwnerAlive), as the owner's
// Drain does. A mailbox.Actor over Mailbox.Mailbox() does not: the control
// half shows what MailboxActor exists for.
func TestMailboxActorKeepsFileAlive(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ipc   bool
		alive bool
	}{{"MailboxActor", true, true}, {"mailbox.Actor", false, false}} {
		t.Run(tc.name, func(t *testing.T) {
			clk := newMbClock(time.Now())
			m := mbNewForTest(t, MailboxConfig{HeartbeatCycles: 4}, clk.option(), WithLivenessTimeout(time.Second))
			var got []string
			h := func(msg *mailbox.Message) mailbox.Action {
				got = append(got, string(msg.Payload()))
				return mailbox.Continue
			}
			var a agent.Agent
			if tc.ipc {
				ma, err := NewMailboxActor("orders", m, h)
				require.NoError(t, err)
				require.Same(t, m, ma.Owner())
				a = ma
			} else {
				ma, err := mailbox.NewActor("orders", m.Mailbox(), h)
				require.NoError(t, err)
				a = ma
			}
			require.NoError(t, a.OnStart())
			for i := range 10 { // 10 s of duty cycles, one message a second
				require.NoError(t, m.Send(1, []byte{byte('a' + i)}))
				clk.add(time.Second)
				for range 8 {
					_, err := a.DoWork()
					require.NoError(t, err)
				}
			}
			require.Equal(t, []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}, got)
			require.Equal(t, tc.alive, m.File().OwnerAlive(clk.now()))
			if tc.ipc {
				require.Equal(t, clk.now().UnixMilli(), m.ConsumerHeartbeat())
			}
		})
	}
}

// TestMailboxActorClose: OnClose delivers what is queued and closes the
// mailbox (senders get mailbox.ErrClosed) but leaves the file mapped: the
// Mailbox's Close comes after.
func TestMailboxActorClose(t *testing.T) {
	m := mbNewForTest(t, MailboxConfig{})
	n := 0
	a, err := NewMailboxActor("orders", m, func(*mailbox.Message) mailbox.Action { n++; return mailbox.Continue })
	require.NoError(t, err)
	require.NoError(t, a.OnStart())
	for range 3 {
		require.NoError(t, m.Send(1, []byte("x")))
	}
	require.NoError(t, a.OnClose())
	require.Equal(t, 3, n)
	require.ErrorIs(t, m.Send(1, []byte("x")), mailbox.ErrClosed)
	require.True(t, m.IsClosed())
	require.NoError(t, m.Close())
}

// TestMailboxActorCloseNotDrained: a handler that aborts leaves messages
// queued; OnClose reports them with mailbox.ErrNotDrained.
func TestMailboxActorCloseNotDrained(t *testing.T) {
	m := mbNewForTest(t, MailboxConfig{})
	a, err := NewMailboxActor("orders", m, func(*mailbox.Message) mailbox.Action { return mailbox.Abort })
	require.NoError(t, err)
	require.NoError(t, a.OnStart())
	require.NoError(t, m.Send(1, []byte("x")))
	require.ErrorIs(t, a.OnClose(), mailbox.ErrNotDrained)
}

// TestMailboxActorErrors: only the owner gets an actor; the actor's own
// options are validated as mailbox.NewActor does.
func TestMailboxActorErrors(t *testing.T) {
	m := mbNewForTest(t, MailboxConfig{})
	s := mbOpenForTest(t, m.Path())
	noop := func(*mailbox.Message) mailbox.Action { return mailbox.Continue }
	_, err := NewMailboxActor("orders", s, noop)
	require.ErrorIs(t, err, ErrNotOwner)
	_, err = NewMailboxActor("orders", nil, noop)
	require.ErrorIs(t, err, mailbox.ErrConfig)
	_, err = NewMailboxActor("orders", m, nil)
	require.ErrorIs(t, err, mailbox.ErrNilHandler)
	_, err = NewMailboxActor("orders", m, noop, mailbox.WithDrainLimit(0))
	require.ErrorIs(t, err, mailbox.ErrConfig)
	require.False(t, errors.Is(err, ErrNotOwner))
}

// TestMailboxVersionOfOtherKinds: only ring files can hold a mailbox.
func TestMailboxVersionOfOtherKinds(t *testing.T) {
	cf, err := CreateCounters(testDir(t), "c", 4, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cf.Close() })
	_, err = MailboxVersion(cf.File())
	require.ErrorIs(t, err, ErrKind)
}
