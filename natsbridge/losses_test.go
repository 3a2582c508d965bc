package natsbridge

import (
	"fmt"
	"testing"
	"time"

	"github.com/dutyrt/duty/mailbox"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"
)

// publishAll pumps out until the first upTo messages of f are batched and
// every batch is handed to the client, then flushes out's connection: the
// server has processed all of them.
func publishAll(t *testing.T, f *feeder, out *Outbound, upTo int) {
	t.Helper()
	f.upTo = upTo
	pump(t, func() bool {
		return f.sent == upTo && out.Stats().Batched == int64(upTo) && out.frame == nil && out.fill.Count() == 0
	}, f, out)
	require.NoError(t, out.nc.Flush())
}

// Core NATS delivers nothing to a subject without subscribers: messages
// published before the inbound bridge subscribed never reach it. Its first
// batch from the source tells how many it missed, and they are counted.
func TestCoreLateReceiverCountsMissedMessages(t *testing.T) {
	s := runServer(t, server.Options{})
	src, dst := newMailbox(t, 1<<16), newMailbox(t, 1<<20)
	cfg := testConfig(s, "late")
	out, err := NewOutbound(ctx(t), cfg, src)
	require.NoError(t, err)
	f := &feeder{mb: src}
	const early, late = 1500, 700
	publishAll(t, f, out, early) // to no one
	before := out.seq

	in, err := NewInbound(ctx(t), cfg, dst)
	require.NoError(t, err)
	c := &checker{t: t, mb: dst, allowGaps: true}
	f.upTo = early + late
	pump(t, func() bool { return c.next == early+late }, f, out, in, c)
	require.NoError(t, out.OnClose())
	require.NoError(t, in.OnClose())

	st := in.Stats()
	require.Equal(t, int64(late), st.Delivered)
	require.Equal(t, int64(early), st.LostMessages, "the messages sent before the subscription")
	require.Equal(t, int64(before), st.LostBatches)
	require.Equal(t, out.Stats().Batched, st.Delivered+st.Dropped+st.LostMessages, "the counts reconcile")
}

// An inbound bridge that restarts misses what is published in between; the
// new bridge counts as lost everything its source sent before its first
// batch (what its predecessor delivered included: counts are per bridge).
func TestCoreRestartedReceiverCountsMissedMessages(t *testing.T) {
	s := runServer(t, server.Options{})
	src := newMailbox(t, 1<<16)
	cfg := testConfig(s, "restart")
	out, err := NewOutbound(ctx(t), cfg, src)
	require.NoError(t, err)
	f := &feeder{mb: src}
	const n1, n2, n3 = 800, 600, 400

	dst1 := newMailbox(t, 1<<20)
	in1, err := NewInbound(ctx(t), cfg, dst1)
	require.NoError(t, err)
	c1 := &checker{t: t, mb: dst1}
	f.upTo = n1
	pump(t, func() bool { return c1.next == n1 }, f, out, in1, c1)
	require.NoError(t, in1.OnClose())

	publishAll(t, f, out, n1+n2) // while no inbound bridge listens

	dst2 := newMailbox(t, 1<<20)
	in2, err := NewInbound(ctx(t), cfg, dst2)
	require.NoError(t, err)
	c2 := &checker{t: t, mb: dst2, allowGaps: true}
	f.upTo = n1 + n2 + n3
	pump(t, func() bool { return c2.next == n1+n2+n3 }, f, out, in2, c2)
	require.NoError(t, out.OnClose())
	require.NoError(t, in2.OnClose())

	st1, st2 := in1.Stats(), in2.Stats()
	require.Equal(t, int64(n1), st1.Delivered)
	require.Zero(t, st1.LostMessages)
	require.Equal(t, int64(n3), st2.Delivered)
	require.Equal(t, int64(n1+n2), st2.LostMessages, "what the restarted bridge never saw")
	require.Equal(t, out.Stats().Batched, st1.Delivered+st2.Delivered+st2.LostMessages-st1.Delivered)
}

// LostMessages counts messages, LostBatches batches: a missing batch of
// four messages is four lost messages; a source first seen at its second
// batch lost the messages of its first.
func TestCoreCountsLostMessagesNotBatches(t *testing.T) {
	s := runServer(t, server.Options{})
	dst := newMailbox(t, 1<<16)
	cfg := testConfig(s, "count")
	in, err := NewInbound(ctx(t), cfg, dst)
	require.NoError(t, err)
	nc, err := nats.Connect(s.ClientURL())
	require.NoError(t, err)
	defer nc.Close()

	b, _ := newBatch(1024)
	frame := func(source, seq, first uint64, count int) []byte {
		b.Reset()
		for i := range count {
			require.NoError(t, b.Append(1, fmt.Appendf(nil, "message %06d", int(first)+i)))
		}
		return b.Seal(source, seq, first)
	}
	// Source 9: batch 1 (messages 1-3), batch 2 (4-7) lost, batch 3 (8-9).
	require.NoError(t, nc.Publish(cfg.Subject, frame(9, 1, 1, 3)))
	require.NoError(t, nc.Publish(cfg.Subject, frame(9, 3, 8, 2)))
	// Source 11: first seen at batch 2 (messages 6-7): batch 1 had 1-5.
	require.NoError(t, nc.Publish(cfg.Subject, frame(11, 2, 6, 2)))
	// A frame of the previous version: refused whole, counted.
	old := append([]byte(nil), frame(9, 4, 10, 1)...)
	old[offVersion] = 1
	require.NoError(t, nc.Publish(cfg.Subject, old))
	require.NoError(t, nc.Flush())

	pump(t, func() bool { st := in.Stats(); return st.Delivered == 7 && st.Rejected == 1 })
	require.NoError(t, in.OnClose())
	st := in.Stats()
	require.Equal(t, int64(2), st.LostBatches)
	require.Equal(t, int64(4+5), st.LostMessages)
}

// Frames the NATS client drops as a slow consumer are counted once: in
// ClientDropped as frames, and their messages in LostMessages when the
// source's next batch shows the gap (not a second time as lost batches).
func TestCoreClientDropsAreCountedOnce(t *testing.T) {
	s := runServer(t, server.Options{})
	dst := newMailbox(t, 1<<16)
	cfg := testConfig(s, "slowclient")
	cfg.Options = append(cfg.Options, nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
	in, err := NewInbound(ctx(t), cfg, dst)
	require.NoError(t, err)
	require.NoError(t, in.sub.SetPendingLimits(1, 1<<20))
	nc, err := nats.Connect(s.ClientURL())
	require.NoError(t, err)
	defer nc.Close()

	b, _ := newBatch(1024)
	publish := func(seq uint64) {
		b.Reset()
		require.NoError(t, b.Append(1, fmt.Appendf(nil, "message %06d", seq)))
		require.NoError(t, nc.Publish(cfg.Subject, b.Seal(77, seq, seq)))
	}
	const n = 20
	in.mu.Lock() // the callback waits: the client's pending queue overflows
	for seq := uint64(1); seq < n; seq++ {
		publish(seq)
	}
	require.NoError(t, nc.Flush())
	deadline := time.Now().Add(10 * time.Second)
	for d, _ := in.sub.Dropped(); d < n-3; d, _ = in.sub.Dropped() {
		require.True(t, time.Now().Before(deadline), "the client dropped %d of %d frames", d, n-1)
		time.Sleep(time.Millisecond)
	}
	in.mu.Unlock()
	for m, _, _ := in.sub.Pending(); m > 0; m, _, _ = in.sub.Pending() {
		require.True(t, time.Now().Before(deadline), "the callback does not catch up")
		time.Sleep(time.Millisecond)
	}
	require.NoError(t, in.sub.SetPendingLimits(nats.DefaultSubPendingMsgsLimit, nats.DefaultSubPendingBytesLimit))
	publish(n) // shows the gap
	require.NoError(t, nc.Flush())
	pump(t, func() bool { st := in.Stats(); return st.Delivered+st.LostMessages == n })
	require.NoError(t, in.OnClose())
	st := in.Stats()
	require.Positive(t, st.ClientDropped)
	require.Equal(t, st.ClientDropped, st.LostBatches, "each dropped frame counted once")
	require.Equal(t, st.ClientDropped, st.LostMessages)
	require.Equal(t, int64(n), st.Delivered+st.LostMessages)
}

// The server dies near the end of a stream and the outbound bridge closes
// before the client could reconnect: the tail it handed to the client is
// lost. OnClose says so (ErrLost) and counts it: exactly the messages no
// flush confirmed the server had.
func TestCoreServerLostAtTheEndCountsTheTail(t *testing.T) {
	s := runServer(t, server.Options{})
	src, dst := newMailbox(t, 1<<16), newMailbox(t, 1<<20)
	cfg := testConfig(s, "tail")
	in, err := NewInbound(ctx(t), cfg, dst)
	require.NoError(t, err)
	out, err := NewOutbound(ctx(t), cfg, src)
	require.NoError(t, err)
	const n = 10000
	f := &feeder{mb: src, upTo: n / 2}
	c := &checker{t: t, mb: dst}
	pump(t, func() bool { return c.next == n/2 && out.confirmed.Load() == n/2 }, f, out, in, c)

	stopServer(s)
	f.upTo = n // into the client's reconnect buffer
	pump(t, func() bool { return out.Stats().Batched == n && out.frame == nil && out.fill.Count() == 0 }, f, out)
	err = out.OnClose()
	require.ErrorIs(t, err, ErrLost)
	require.ErrorContains(t, err, fmt.Sprintf("%d handed to the client and not confirmed", n/2))
	os := out.Stats()
	require.Equal(t, int64(n/2), os.LostMessages)
	require.NoError(t, in.OnClose())
	is := in.Stats()
	require.Equal(t, int64(n/2), is.Delivered)
	require.Equal(t, int64(n), is.Delivered+is.Dropped+is.LostMessages+os.LostMessages, "every message delivered or counted")
}

// A message taken from the mailbox that cannot be handed to the client
// before the bridge closes (the reconnect buffer is full) is counted too.
func TestCoreUnpublishedAtCloseIsCounted(t *testing.T) {
	s := runServer(t, server.Options{})
	src := newMailboxMax(t, 1<<14, 1024)
	cfg := testConfig(s, "unpublished")
	cfg.BatchBytes = 4096
	cfg.Options = append(cfg.Options, nats.ReconnectBufSize(8*1024))
	out, err := NewOutbound(ctx(t), cfg, src)
	require.NoError(t, err)
	stopServer(s)
	f := &feeder{mb: src, upTo: 5000}
	pump(t, func() bool { return out.Stats().BackPressured > 0 && out.fill.Count() > 0 }, f, out)
	batched := out.Stats().Batched
	err = out.OnClose()
	require.ErrorIs(t, err, ErrLost)
	require.Equal(t, batched, out.Stats().LostMessages, "nothing of it reached a server")
	left, err := src.Drain(func(*mailbox.Message) mailbox.Action { return mailbox.Continue }, 1<<20)
	require.NoError(t, err)
	require.Equal(t, int64(f.sent)-batched, int64(left), "the rest stays in the mailbox")
}
