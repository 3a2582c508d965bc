package ipc

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/clock"
	"github.com/dutyrt/duty/counters"
	"github.com/dutyrt/duty/mailbox"
)

// TestMailboxActorKeepsFileAlive: a mailbox.NewActor over a file's mailbox,
// run past the liveness timeout, keeps the file's owner heartbeat fresh
// (File.ownerAlive) and the consumer heartbeat at its clock's time: its
// duty cycles run the file's heartbeat as Drain does. The control half
// (the same time passes, no duty cycle) shows the clock's advance is
// enough to make the owner look dead.
func TestMailboxActorKeepsFileAlive(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cycle bool
	}{{"mailbox.NewActor", true}, {"control: no duty cycles", false}} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clock.NewManual(time.Now())
			m, mf := mbNewForTest(t, mailbox.Config{HeartbeatCycles: 4, Clock: clk}, mbClockOpt(clk), WithLivenessTimeout(time.Second))
			var got []string
			a, err := mailbox.NewActor("orders", m, func(msg *mailbox.Message) mailbox.Action {
				got = append(got, string(msg.Payload()))
				return mailbox.Continue
			})
			require.NoError(t, err)
			require.NoError(t, a.OnStart())
			for i := range 10 { // 10 s of duty cycles, one message a second
				require.NoError(t, m.Send(1, []byte{byte('a' + i)}))
				clk.Advance(time.Second)
				if !tc.cycle {
					continue
				}
				for range 8 {
					_, err := a.DoWork()
					require.NoError(t, err)
				}
			}
			require.Equal(t, tc.cycle, mf.File.ownerAlive(clk.Now()))
			if tc.cycle {
				require.Equal(t, []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}, got)
				require.Equal(t, clk.Now().UnixMilli(), mf.consumerHeartbeat())
				hb, err := mf.File.heartbeatMillis()
				require.NoError(t, err)
				require.Equal(t, clk.Now().UnixMilli(), hb)
			} else {
				require.Empty(t, got)
				require.Less(t, mf.consumerHeartbeat(), clk.Now().UnixMilli()-5000)
			}
		})
	}
}

// TestMailboxActorClose: OnClose closes the mailbox (senders in every
// view get mailbox.ErrClosed), delivers what is queued, and ends with a
// forced heartbeat that publishes the final statistics (the counters file,
// the file's owner heartbeat), but leaves the file mapped: the file's
// Close comes after.
func TestMailboxActorClose(t *testing.T) {
	dir := testDir(t)
	cf, err := CreateCounters(dir, "counters", 16, nil)
	require.NoError(t, err)
	defer cf.Close()
	clk := clock.NewManual(time.Now())
	m, mf, err := CreateMailbox(dir, "mbox", mailbox.Config{Clock: clk}, WithCounters(cf), mbClockOpt(clk))
	require.NoError(t, err)
	defer mf.Close()
	s, _ := mbOpenForTest(t, mf.File.Path(), mbClockOpt(clk))
	depth := func() int64 {
		var d int64 = -1
		require.NoError(t, cf.Reader().ForEachRecord(func(rec counters.Record) bool {
			typeID, value := rec.TypeID, rec.Value
			if counters.TypeName(typeID) == "mailbox-depth" {
				d = value
			}
			return true
		}))
		return d
	}
	n := 0
	a, err := mailbox.NewActor("orders", m, func(*mailbox.Message) mailbox.Action { n++; return mailbox.Continue })
	require.NoError(t, err)
	require.NoError(t, a.OnStart())
	for range 3 {
		require.NoError(t, s.Send(1, []byte("x")))
	}
	require.NoError(t, m.Heartbeat())
	require.Positive(t, depth())
	clk.Advance(5 * time.Second)

	require.NoError(t, a.OnClose())
	require.Equal(t, 3, n)
	require.ErrorIs(t, s.Send(1, []byte("x")), mailbox.ErrClosed)
	require.ErrorIs(t, m.Send(1, []byte("x")), mailbox.ErrClosed)
	require.ErrorIs(t, m.Err(), mailbox.ErrClosed)
	require.ErrorIs(t, s.Err(), mailbox.ErrClosed)
	require.Equal(t, int64(3), s.Stats().Delivered, "in the file")
	require.Zero(t, depth(), "the final statistics")
	hb, err := mf.File.heartbeatMillis()
	require.NoError(t, err)
	require.Equal(t, clk.EpochMillis(), hb, "OnClose's last heartbeat")
	require.Equal(t, clk.EpochMillis(), mf.consumerHeartbeat())
	require.NoError(t, mf.Close())
}

// TestMailboxActorDiscardClose: with WithCloseMode(Discard), OnClose
// discards what is queued; the count is in the file, seen by a sender's
// view.
func TestMailboxActorDiscardClose(t *testing.T) {
	m, mf := mbNewForTest(t, mailbox.Config{})
	s, _ := mbOpenForTest(t, mf.File.Path())
	a, err := mailbox.NewActor("orders", m, func(*mailbox.Message) mailbox.Action {
		t.Error("delivered after Close(Discard)")
		return mailbox.Continue
	}, mailbox.WithCloseMode(mailbox.Discard))
	require.NoError(t, err)
	require.NoError(t, a.OnStart())
	for range 4 {
		require.NoError(t, s.Send(1, []byte("x")))
	}
	require.NoError(t, s.SendParts(1, []byte("x"), make([]byte, 20000)))
	require.NoError(t, a.OnClose())
	require.Equal(t, int64(5), s.Stats().Discarded)
	require.Zero(t, s.Stats().Delivered)
	require.ErrorIs(t, s.Send(1, []byte("x")), mailbox.ErrClosed)
	require.NoError(t, mf.Close(), "nothing left queued")
}

// TestMailboxActorCloseNotDrained: a handler that aborts leaves messages
// queued; OnClose reports them with mailbox.ErrNotDrained, and so does the
// file's Close.
func TestMailboxActorCloseNotDrained(t *testing.T) {
	m, mf := mbNewForTest(t, mailbox.Config{})
	a, err := mailbox.NewActor("orders", m, func(*mailbox.Message) mailbox.Action { return mailbox.Abort })
	require.NoError(t, err)
	require.NoError(t, a.OnStart())
	require.NoError(t, m.Send(1, []byte("x")))
	require.ErrorIs(t, a.OnClose(), mailbox.ErrNotDrained)
	require.ErrorIs(t, mf.Close(), mailbox.ErrNotDrained)
}

// TestMailboxActorErrors: only the owner's view gets an actor (a sender's
// view is refused with mailbox.ErrNotConsumer); the actor's own options
// are validated.
func TestMailboxActorErrors(t *testing.T) {
	m, mf := mbNewForTest(t, mailbox.Config{})
	s, _ := mbOpenForTest(t, mf.File.Path())
	_, err := mailbox.NewActor("orders", s, mbNoop)
	require.ErrorIs(t, err, mailbox.ErrNotConsumer)
	_, err = mailbox.NewActor("orders", nil, mbNoop)
	require.ErrorIs(t, err, mailbox.ErrArgument)
	_, err = mailbox.NewActor("orders", m, nil)
	require.ErrorIs(t, err, mailbox.ErrArgument)
	_, err = mailbox.NewActor("orders", m, mbNoop, mailbox.WithDrainLimit(0))
	require.ErrorIs(t, err, mailbox.ErrArgument)
	require.NotErrorIs(t, err, mailbox.ErrNotConsumer)
	_, err = mailbox.NewActor("orders", m, mbNoop)
	require.NoError(t, err)
	require.NoError(t, s.SendContext(context.Background(), 1, nil), "none of it closed the mailbox")
}

// TestInspectMailboxOfOtherKinds: only ring files can hold a mailbox; a
// plain ring reads version 0 and nothing else.
func TestInspectMailboxOfOtherKinds(t *testing.T) {
	cf, err := CreateCounters(testDir(t), "c", 4, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cf.Close() })
	_, err = InspectMailbox(cf.File)
	require.ErrorIs(t, err, ErrKind)
	r, err := CreateRing(testDir(t), "plain", 4096)
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close() })
	info, err := InspectMailbox(r.File)
	require.NoError(t, err)
	require.Zero(t, info)
}
