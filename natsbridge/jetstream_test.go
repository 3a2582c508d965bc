package natsbridge

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/dutyrt/duty/agent"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"
)

// An acknowledgement that never reaches the server: the batch is
// redelivered after AckWait, recognised by its stream sequence, acked and
// skipped; the mailbox sees every message once.
func TestJetStreamRedeliveryIsSkipped(t *testing.T) {
	s := runServer(t, jsServerOptions(t))
	src, dst := newMailboxMax(t, 1<<16, 1024), newMailbox(t, 1<<20)
	cfg := jsConfig(s, "redeliver")
	cfg.BatchBytes = 2048
	cfg.JetStream.AckWait = 100 * time.Millisecond
	out, err := NewOutbound(ctx(t), cfg, src)
	require.NoError(t, err)
	in, err := NewInbound(ctx(t), cfg, dst)
	require.NoError(t, err)
	lost := 0
	in.ack = func(m jetstream.Msg) error {
		if lost < 2 {
			lost++
			return nil // the acknowledgement is lost
		}
		return m.Ack()
	}

	n := 1000
	f := &feeder{mb: src, upTo: n}
	c := &checker{t: t, mb: dst}
	pump(t, func() bool { return c.next == n && in.Stats().Redelivered == 2 }, f, out, in, c)
	require.NoError(t, out.OnClose())
	require.NoError(t, in.OnClose())
	os, is := out.Stats(), in.Stats()
	require.Equal(t, int64(n), os.Batched)
	require.Equal(t, int64(n), is.Delivered)
	require.Equal(t, int64(2), is.Redelivered)
	require.Zero(t, is.Dropped+is.Rejected)
}

// The server stops mid-stream and restarts on the same port and file
// store: both bridges reconnect, the outbound side republishes what was
// not acknowledged (deduplicated by message id), and the mailbox receives
// every message exactly once, in order.
func TestJetStreamServerRestart(t *testing.T) {
	opts := jsServerOptions(t)
	s := runServer(t, opts)
	opts.Port = portOf(s)
	src, dst := newMailboxMax(t, 1<<16, 1024), newMailbox(t, 1<<20)
	cfg := jsConfig(s, "restart")
	cfg.BatchBytes = 4096
	out, err := NewOutbound(ctx(t), cfg, src)
	require.NoError(t, err)
	in, err := NewInbound(ctx(t), cfg, dst)
	require.NoError(t, err)

	n := 4000 * soak()
	f := &feeder{mb: src, upTo: n / 2}
	c := &checker{t: t, mb: dst}
	pump(t, func() bool { return c.next >= n/4 }, f, out, in, c)
	stopServer(s)
	f.upTo = n
	for range 200 { // run while the server is down
		for _, a := range []doer{f, out, in, c} {
			_, err := a.DoWork()
			require.NoError(t, err)
		}
		time.Sleep(100 * time.Microsecond)
	}
	runServer(t, opts)
	defer func() {
		if t.Failed() {
			t.Logf("next %d sent %d out %+v in %+v cur %v hw %d fetch %v frame %v inflight %v", c.next, f.sent, out.Stats(), in.Stats(), in.cur != nil, in.hw, in.fetch != nil, out.frame != nil, out.inflight != nil)
		}
	}()
	pump(t, func() bool { return c.next == n }, f, out, in, c)
	require.NoError(t, out.OnClose())
	require.NoError(t, in.OnClose())
	os, is := out.Stats(), in.Stats()
	require.Equal(t, int64(n), os.Batched)
	require.Equal(t, int64(n), is.Delivered)
	require.GreaterOrEqual(t, os.Reconnects, int64(1))
	require.GreaterOrEqual(t, is.Reconnects, int64(1))
	require.Zero(t, is.Dropped+is.Rejected)
	t.Logf("out %+v", os)
	t.Logf("in  %+v", is)
}

// A local consumer slower than the traffic: the inbound side pulls only
// when the mailbox has room, the stream holds the rest, and nothing is
// dropped.
func TestJetStreamBackPressure(t *testing.T) {
	s := runServer(t, jsServerOptions(t))
	src, dst := newMailboxMax(t, 1<<16, 1024), newMailbox(t, 4096)
	cfg := jsConfig(s, "slow")
	cfg.BatchBytes = 2048
	out, err := NewOutbound(ctx(t), cfg, src)
	require.NoError(t, err)
	in, err := NewInbound(ctx(t), cfg, dst)
	require.NoError(t, err)

	n := 2000
	f := &feeder{mb: src, upTo: n}
	pump(t, func() bool { return f.sent == n && src.Stats().Depth == 0 }, f, out)
	require.NoError(t, out.OnClose()) // the last batch is stored
	pump(t, func() bool { return in.Stats().BackPressured > 0 }, in)
	for range 100 {
		_, err := in.DoWork()
		require.NoError(t, err)
	}
	st := in.Stats()
	require.Less(t, st.Delivered, int64(n/4), "no more than the mailbox holds")
	c := &checker{t: t, mb: dst}
	pump(t, func() bool { return c.next == n }, in, doerFunc(func() (int, error) { return c.drain(7), nil }))
	require.NoError(t, in.OnClose())
	st = in.Stats()
	require.Equal(t, int64(n), st.Delivered)
	require.Zero(t, st.Dropped)
}

// A restarted inbound bridge on the same durable consumer continues after
// the last batch the previous one delivered.
func TestJetStreamInboundRestart(t *testing.T) {
	s := runServer(t, jsServerOptions(t))
	src, dst := newMailboxMax(t, 1<<16, 1024), newMailbox(t, 1<<20)
	cfg := jsConfig(s, "inrestart")
	cfg.BatchBytes = 2048
	out, err := NewOutbound(ctx(t), cfg, src)
	require.NoError(t, err)
	in, err := NewInbound(ctx(t), cfg, dst)
	require.NoError(t, err)
	n := 2000
	f := &feeder{mb: src, upTo: n}
	c := &checker{t: t, mb: dst}
	pump(t, func() bool { return c.next >= n/2 }, f, out, in, c)
	require.NoError(t, in.OnClose())
	hw := in.highWater()
	in, err = NewInbound(ctx(t), cfg, dst)
	require.NoError(t, err)
	require.Equal(t, hw, in.highWater(), "the ack floor is where the previous bridge stopped")
	pump(t, func() bool { return c.next == n }, f, out, in, c)
	require.NoError(t, out.OnClose())
	require.NoError(t, in.OnClose())
}

// A payload that is not a frame, published straight into the stream, is
// terminated and counted; the batches after it are delivered.
func TestJetStreamRejectsForeign(t *testing.T) {
	s := runServer(t, jsServerOptions(t))
	src, dst := newMailboxMax(t, 1<<16, 1024), newMailbox(t, 1<<20)
	cfg := jsConfig(s, "foreign")
	in, err := NewInbound(ctx(t), cfg, dst)
	require.NoError(t, err)
	js, err := jetstream.New(in.nc)
	require.NoError(t, err)
	_, err = js.Publish(ctx(t), cfg.Subject, []byte("DNB\x01 but not a frame at all, sorry"))
	require.NoError(t, err)
	_, err = js.Publish(ctx(t), cfg.Subject, []byte(`{"json":true}`))
	require.NoError(t, err)
	out, err := NewOutbound(ctx(t), cfg, src)
	require.NoError(t, err)
	f := &feeder{mb: src, upTo: 10}
	c := &checker{t: t, mb: dst}
	pump(t, func() bool { return c.next == 10 }, f, out, in, c)
	require.NoError(t, out.OnClose())
	require.NoError(t, in.OnClose())
	require.Equal(t, int64(2), in.Stats().Rejected)
}

// A batch stored twice under two message ids (as a republish after the
// deduplication window would store it) is delivered once: the inbound side
// knows the source's batch sequence.
func TestJetStreamDuplicateBatchIsSkipped(t *testing.T) {
	s := runServer(t, jsServerOptions(t))
	dst := newMailbox(t, 1<<16)
	cfg := jsConfig(s, "dup")
	in, err := NewInbound(ctx(t), cfg, dst)
	require.NoError(t, err)
	js, err := jetstream.New(in.nc)
	require.NoError(t, err)
	b, _ := newBatch(1024)
	require.NoError(t, b.Append(1, []byte("message 000000")))
	first := append([]byte(nil), b.Seal(5, 1, 1)...)
	b.Reset()
	require.NoError(t, b.Append(2, []byte("hdr"), []byte("message 000001")))
	for i, f := range [][]byte{first, first, b.Seal(5, 2, 2)} {
		_, err = js.Publish(ctx(t), cfg.Subject, f, jetstream.WithMsgID(fmt.Sprintf("id-%d", i)))
		require.NoError(t, err)
	}
	c := &checker{t: t, mb: dst}
	pump(t, func() bool { return c.next == 2 && in.Stats().Duplicates == 1 }, in, c)
	require.NoError(t, in.OnClose())
	require.Equal(t, int64(2), in.Stats().Delivered)
}

// A batch held by a full mailbox for longer than AckWait is not
// redelivered: the bridge extends its ack wait while it holds it.
func TestJetStreamHeldBatchIsNotRedelivered(t *testing.T) {
	s := runServer(t, jsServerOptions(t))
	src, dst := newMailboxMax(t, 1<<16, 1024), newMailbox(t, 4096)
	cfg := jsConfig(s, "held")
	cfg.BatchBytes = 8192
	cfg.JetStream.AckWait = 200 * time.Millisecond
	out, err := NewOutbound(ctx(t), cfg, src)
	require.NoError(t, err)
	in, err := NewInbound(ctx(t), cfg, dst)
	require.NoError(t, err)
	n := 600
	f := &feeder{mb: src, upTo: n}
	pump(t, func() bool { return f.sent == n && src.Stats().Depth == 0 }, f, out)
	require.NoError(t, out.OnClose())
	pump(t, func() bool { return in.cur != nil && in.Stats().BackPressured > 1 }, in)
	for end := time.Now().Add(3 * cfg.JetStream.AckWait); time.Now().Before(end); {
		_, err := in.DoWork() // held: the mailbox is full and nobody drains it
		require.NoError(t, err)
		time.Sleep(time.Millisecond)
	}
	c := &checker{t: t, mb: dst}
	pump(t, func() bool { return c.next == n }, in, c)
	require.NoError(t, in.OnClose())
	require.Zero(t, in.Stats().Redelivered, "the held batch was redelivered")
}

// A consumer deleted under the bridge ends it: a recreated consumer (or
// stream) may start its sequences again, which the high-water sequence
// would skip.
func TestJetStreamConsumerDeletedEndsTheAgent(t *testing.T) {
	s := runServer(t, jsServerOptions(t))
	cfg := jsConfig(s, "deleted")
	in, err := NewInbound(ctx(t), cfg, newMailbox(t, 1<<16))
	require.NoError(t, err)
	_, err = in.DoWork() // a pull is waiting at the server now
	require.NoError(t, err)
	require.NotNil(t, in.fetch)
	js, err := jetstream.New(in.nc)
	require.NoError(t, err)
	require.NoError(t, js.DeleteConsumer(ctx(t), cfg.JetStream.Stream, cfg.Name))
	var end error
	for deadline := time.Now().Add(10 * time.Second); end == nil && time.Now().Before(deadline); {
		_, end = in.DoWork()
		time.Sleep(100 * time.Microsecond)
	}
	require.ErrorIs(t, end, agent.ErrTermination)
	require.True(t, errors.Is(end, jetstream.ErrConsumerNotFound) || errors.Is(end, jetstream.ErrConsumerDeleted), "%v", end)
	require.NoError(t, in.OnClose())
}
