package ipc

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/mailbox"
)

// TestMailboxUseAfterClose: after its Close a Mailbox's own methods return
// mailbox.ErrClosed instead of touching the unmapped file (they faulted
// the whole process before), for the owner and for a sender.
func TestMailboxUseAfterClose(t *testing.T) {
	m := mbNewForTest(t, MailboxConfig{})
	s := mbOpenForTest(t, m.Path())
	ms := s.NewSender()
	require.NoError(t, s.Send(1, []byte("before")))
	require.Len(t, mbDrainAll(t, m), 1)
	for _, c := range []struct {
		name string
		mb   *Mailbox
	}{{"sender", s}, {"owner", m}} {
		name, mb := c.name, c.mb
		before := mb.Stats()
		require.NoError(t, mb.Close(), name)
		require.NoError(t, mb.Close(), name+": idempotent")
		require.True(t, mb.IsClosed(), name)
		if name == "owner" {
			before.Closed = true // the owner's Close closes the mailbox
		}
		require.Equal(t, before, mb.Stats(), name+": the last statistics")
		require.Zero(t, mb.ConsumerHeartbeat(), name)
		require.ErrorIs(t, mb.CheckConsumer(), mailbox.ErrClosed, name)
		ctx := context.Background()
		for op, err := range map[string]error{
			"Send":             mb.Send(1, []byte("x")),
			"SendParts":        mb.SendParts(1, []byte("x"), []byte("y")),
			"SendTyped":        SendTyped(mb, mbQuote{id: 1}),
			"SendContext":      mb.SendContext(ctx, 1, []byte("x")),
			"SendPartsContext": mb.SendPartsContext(ctx, 1, []byte("x")),
		} {
			require.ErrorIs(t, err, mailbox.ErrClosed, "%s %s", name, op)
		}
		_, err := mb.Claim(1, 8)
		require.ErrorIs(t, err, mailbox.ErrClosed, name)
		_, err = mb.ClaimParts(1, 8, 8)
		require.ErrorIs(t, err, mailbox.ErrClosed, name)
	}
	_, err := m.Drain(func(*mailbox.Message) mailbox.Action { return mailbox.Continue }, 1)
	require.ErrorIs(t, err, mailbox.ErrClosed)
	require.ErrorIs(t, m.Heartbeat(), mailbox.ErrClosed)
	ctx := context.Background()
	for op, err := range map[string]error{
		"Send":             ms.Send(1, []byte("x")),
		"SendParts":        ms.SendParts(1, []byte("x")),
		"SendContext":      ms.SendContext(ctx, 1, []byte("x")),
		"SendPartsContext": ms.SendPartsContext(ctx, 1, []byte("x")),
	} {
		require.ErrorIs(t, err, mailbox.ErrClosed, "MailboxSender %s", op)
	}
	_, err = ms.Claim(1, 8)
	require.ErrorIs(t, err, mailbox.ErrClosed)
	_, err = ms.ClaimParts(1, 8)
	require.ErrorIs(t, err, mailbox.ErrClosed)
}

// TestMailboxActorAfterClose: an actor whose Mailbox was closed under it
// stops (an unexpected termination wrapping mailbox.ErrClosed) instead of
// touching the unmapped file, and its OnClose has nothing left to do.
func TestMailboxActorAfterClose(t *testing.T) {
	m := mbNewForTest(t, MailboxConfig{})
	a, err := NewMailboxActor("orders", m, func(*mailbox.Message) mailbox.Action { return mailbox.Continue })
	require.NoError(t, err)
	require.NoError(t, a.OnStart())
	require.NoError(t, m.Close())
	_, err = a.DoWork()
	require.ErrorIs(t, err, mailbox.ErrClosed)
	term, expected := agent.IsTermination(err)
	require.True(t, term)
	require.False(t, expected)
	require.NoError(t, a.OnClose())
}
