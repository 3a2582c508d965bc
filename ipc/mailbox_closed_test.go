package ipc

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/mailbox"
)

// TestMailboxUseAfterClose: after its file's Close a mailbox returns
// mailbox.ErrClosed instead of touching the unmapped file (the file
// detaches it), for the owner and for a sender, and keeps its last
// statistics; the handle's own methods do the same.
func TestMailboxUseAfterClose(t *testing.T) {
	m, mf := mbNewForTest(t, mailbox.Config{})
	s, sf := mbOpenForTest(t, mf.File.Path())
	ms := s.NewSender()
	require.NoError(t, s.Send(1, []byte("before")))
	require.Len(t, mbDrainAll(t, m), 1)
	for _, c := range []struct {
		name string
		mb   *mailbox.Mailbox
		f    *MailboxFile
	}{{"sender", s, sf}, {"owner", m, mf}} {
		name, mb, f := c.name, c.mb, c.f
		before := mb.Stats()
		require.False(t, before.Closed, name)
		require.NoError(t, f.Close(), name)
		require.NoError(t, f.Close(), name+": idempotent")
		require.ErrorIs(t, mb.Err(), mailbox.ErrClosed, name)
		before.Closed = true // this view is closed
		require.Equal(t, before, mb.Stats(), name+": the last statistics")
		require.Zero(t, f.consumerHeartbeat(), name)
		require.ErrorIs(t, f.CheckConsumer(), mailbox.ErrClosed, name)
		ctx := context.Background()
		for op, err := range map[string]error{
			"Send":             mb.Send(1, []byte("x")),
			"Send fragmented":  mb.Send(1, make([]byte, 20000)),
			"SendParts":        mb.SendParts(1, []byte("x"), []byte("y")),
			"Fixed.Send":       mbQuotes.Send(mb, &mbQuote{ID: 1}),
			"SendContext":      mb.SendContext(ctx, 1, []byte("x")),
			"SendPartsContext": mb.SendPartsContext(ctx, 1, []byte("x")),
			"a new Sender":     mb.NewSender().Send(1, []byte("x")),
		} {
			require.ErrorIs(t, err, mailbox.ErrClosed, "%s %s", name, op)
		}
		_, err := mb.Claim(1, 8)
		require.ErrorIs(t, err, mailbox.ErrClosed, name)
		_, err = mb.ClaimParts(1, 8, 8)
		require.ErrorIs(t, err, mailbox.ErrClosed, name)
		_, err = mb.Close(mailbox.Drain)
		require.ErrorIs(t, err, mailbox.ErrClosed, name)
		if name == "sender" {
			require.NoError(t, m.Err(), "a sender's file Close leaves the mailbox open")
			require.NoError(t, m.Send(1, []byte("x")), "and the owner's view working")
			require.Len(t, mbDrainAll(t, m), 1)
		}
	}
	_, err := m.Drain(mbNoop, 1)
	require.ErrorIs(t, err, mailbox.ErrClosed)
	require.ErrorIs(t, m.Heartbeat(), mailbox.ErrClosed)
	_, err = m.Close(mailbox.Discard)
	require.ErrorIs(t, err, mailbox.ErrClosed)
	ctx := context.Background()
	for op, err := range map[string]error{
		"Send":             ms.Send(1, []byte("x")),
		"SendParts":        ms.SendParts(1, []byte("x")),
		"SendContext":      ms.SendContext(ctx, 1, []byte("x")),
		"SendPartsContext": ms.SendPartsContext(ctx, 1, []byte("x")),
	} {
		require.ErrorIs(t, err, mailbox.ErrClosed, "Sender %s", op)
	}
	_, err = ms.Claim(1, 8)
	require.ErrorIs(t, err, mailbox.ErrClosed)
	_, err = ms.ClaimParts(1, 8)
	require.ErrorIs(t, err, mailbox.ErrClosed)
}

// TestMailboxActorAfterClose: an actor whose mailbox's file was closed
// under it stops (an unexpected termination wrapping mailbox.ErrClosed)
// instead of touching the unmapped file, and its OnClose has nothing left
// to do. With a heartbeat every cycle the first cycle finds it; with the
// default an idle cycle decides in line and the drain that reports it
// comes with the liveness check (every 64 idle cycles in package mailbox)
// or the heartbeat.
func TestMailboxActorAfterClose(t *testing.T) {
	for _, tc := range []struct {
		name      string
		hbCycles  int
		maxCycles int
	}{{"heartbeat every cycle", 1, 1}, {"default", 0, 2 * 64}} {
		t.Run(tc.name, func(t *testing.T) {
			m, mf := mbNewForTest(t, mailbox.Config{HeartbeatCycles: tc.hbCycles})
			a, err := mailbox.NewActor("orders", m, mbNoop)
			require.NoError(t, err)
			require.NoError(t, a.OnStart())
			require.NoError(t, mf.Close())
			cycles := 0
			for err == nil {
				require.Less(t, cycles, tc.maxCycles, "the actor never saw the close")
				cycles++
				var n int
				n, err = a.DoWork()
				require.Zero(t, n)
			}
			require.ErrorIs(t, err, mailbox.ErrClosed)
			term, expected := agent.IsTermination(err)
			require.True(t, term)
			require.False(t, expected)
			require.NoError(t, a.OnClose())
		})
	}
}
