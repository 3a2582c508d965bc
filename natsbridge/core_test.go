package natsbridge

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/mailbox"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"
)

func TestCoreRoundTrip(t *testing.T) {
	s := runServer(t, server.Options{})
	src, dst := newMailbox(t, 1<<16), newMailbox(t, 1<<20)
	cfg := testConfig(s, "core")
	in, err := NewInbound(ctx(t), cfg, dst)
	require.NoError(t, err)
	out, err := NewOutbound(ctx(t), cfg, src)
	require.NoError(t, err)

	n := 5000 * soak()
	c := &checker{t: t, mb: dst}
	sent := 0
	pump(t, func() bool { return c.next == n }, doerFunc(func() (int, error) {
		k := 0
		for ; sent < n && sendMessage(src, sent) == nil; sent++ {
			k++
		}
		return k, nil
	}), out, in, c)

	require.NoError(t, out.OnClose())
	require.NoError(t, in.OnClose())
	os, is := out.Stats(), in.Stats()
	require.Equal(t, int64(n), os.Batched)
	require.Equal(t, int64(n), is.Delivered)
	require.Less(t, os.Published, int64(n/10), "messages travel in batches")
	require.Zero(t, is.Dropped+is.Rejected+is.LostBatches)
}

type doerFunc func() (int, error)

func (f doerFunc) DoWork() (int, error) { return f() }

// A local consumer slower than the traffic: in core mode the batches that
// find the mailbox full are dropped and counted, message by message, and
// what is delivered is in order without duplicates.
func TestCoreSlowConsumerDropsAreCounted(t *testing.T) {
	s := runServer(t, server.Options{})
	src, dst := newMailbox(t, 1<<16), newMailbox(t, 4096)
	cfg := testConfig(s, "slow")
	in, err := NewInbound(ctx(t), cfg, dst)
	require.NoError(t, err)
	out, err := NewOutbound(ctx(t), cfg, src)
	require.NoError(t, err)

	n := 3000
	sent := 0
	feed := doerFunc(func() (int, error) {
		k := 0
		for ; sent < n && sendMessage(src, sent) == nil; sent++ {
			k++
		}
		return k, nil
	})
	pump(t, func() bool { return sent == n && src.Stats().Depth == 0 && out.Stats().Batched == int64(n) }, feed, out)
	require.NoError(t, out.OnClose()) // publishes the last batch and flushes
	c := &checker{t: t, mb: dst, allowGaps: true}
	pump(t, func() bool { st := in.Stats(); return st.Delivered+st.Dropped == int64(n) }, c)
	c.DoWork()
	require.NoError(t, in.OnClose())
	st := in.Stats()
	require.Positive(t, st.Dropped, "a 4 KiB mailbox cannot take %d messages", n)
	require.Equal(t, int64(n), st.Delivered+st.Dropped)
	require.Equal(t, dst.Stats().Delivered, st.Delivered)
	require.Zero(t, st.LostBatches)
}

// Payloads on a bridged subject that are not frames are rejected, counted,
// and the traffic around them flows.
func TestCoreRejectsForeignAndMalformed(t *testing.T) {
	s := runServer(t, server.Options{})
	dst := newMailbox(t, 1<<16)
	cfg := testConfig(s, "reject")
	in, err := NewInbound(ctx(t), cfg, dst)
	require.NoError(t, err)
	nc, err := nats.Connect(s.ClientURL())
	require.NoError(t, err)
	defer nc.Close()

	b, _ := newBatch(1024)
	require.NoError(t, b.Append(1, []byte("message 000000")))
	good := append([]byte(nil), b.Seal(9, 1, 1)...)
	bad := append([]byte(nil), good...)
	bad[len(bad)-1] ^= 0xff
	require.NoError(t, nc.Publish(cfg.Subject, []byte("hello, not a frame")))
	require.NoError(t, nc.Publish(cfg.Subject, bad))
	require.NoError(t, nc.Publish(cfg.Subject, good))
	b.Reset()
	require.NoError(t, b.Append(2, []byte("hdr"), []byte("message 000001")))
	require.NoError(t, nc.Publish(cfg.Subject, b.Seal(9, 3, 3))) // batch 2 never sent
	require.NoError(t, nc.Flush())

	c := &checker{t: t, mb: dst}
	pump(t, func() bool { return c.next == 2 }, c)
	require.NoError(t, in.OnClose())
	st := in.Stats()
	require.Equal(t, int64(2), st.Rejected)
	require.Equal(t, int64(2), st.Delivered)
	require.Equal(t, int64(1), st.LostBatches, "the gap in source 9's sequence")
}

// While the server is away the client's reconnect buffer fills; the
// outbound side stops there, the local mailbox fills and refuses its
// senders, and nothing the bridge took is dropped: every batch it sealed is
// handed to the client, and after the restart the batches arrive in order,
// the last one included. (Core NATS loses what was in the socket when the
// server went; that is not the bridge's to prevent.)
func TestCoreOutboundBackPressureWhileDisconnected(t *testing.T) {
	opts := server.Options{}
	s := runServer(t, opts)
	opts.Port = portOf(s)
	src := newMailboxMax(t, 1<<14, 1024)
	cfg := testConfig(s, "bp")
	cfg.BatchBytes = 4096
	// The subscriber below connects at once after the restart; the bridge
	// retries every half second, so it usually finds the subscriber there.
	cfg.Options = append(cfg.Options, nats.ReconnectBufSize(16*1024), nats.ReconnectWait(500*time.Millisecond))
	out, err := NewOutbound(ctx(t), cfg, src)
	require.NoError(t, err)

	stopServer(s)
	f := &feeder{mb: src, upTo: 5000}
	pump(t, func() bool { return out.Stats().BackPressured > 0 }, f, out)
	for range 100 { // the bridge stays stopped, the mailbox full
		for _, a := range []doer{f, out} {
			_, err := a.DoWork()
			require.NoError(t, err)
		}
	}
	refused := src.Stats().BackPressured
	for range 10 {
		_, _ = f.DoWork()
	}
	require.Greater(t, src.Stats().BackPressured, refused, "the mailbox refuses its senders")
	require.Less(t, f.sent, f.upTo)

	s = runServer(t, opts)
	nc, err := nats.Connect(s.ClientURL())
	require.NoError(t, err)
	defer nc.Close()
	var last atomic.Uint64
	_, err = nc.Subscribe(cfg.Subject, func(m *nats.Msg) {
		var r Reader
		h, err := r.Reset(m.Data)
		if err != nil || h.Sequence <= last.Load() {
			t.Errorf("batch %d after %d: %v", h.Sequence, last.Load(), err)
		}
		last.Store(h.Sequence)
	})
	require.NoError(t, err)
	require.NoError(t, nc.Flush())
	pump(t, func() bool { return f.sent == f.upTo && out.Stats().Batched == int64(f.upTo) }, f, out)
	require.NoError(t, out.OnClose())
	st := out.Stats()
	require.Zero(t, st.Dropped)
	require.Equal(t, int64(out.seq), st.Published, "every sealed batch was handed to the client")
	pump(t, func() bool { return last.Load() == out.seq }) // the last batch arrives
}

// Bridges on a connection of the caller's (Config.Conn) leave it open on
// close; a connection closed for good ends both agents.
func TestCallersConnClosedEndsTheAgents(t *testing.T) {
	s := runServer(t, server.Options{})
	nc, err := nats.Connect(s.ClientURL(), nats.WriteBufferSize(1<<20))
	require.NoError(t, err)
	defer nc.Close()
	src, dst := newMailbox(t, 1<<16), newMailbox(t, 1<<16)
	cfg := Config{Name: "conn", Subject: "duty.conn", Conn: nc, Logger: quiet}
	in, err := NewInbound(ctx(t), cfg, dst)
	require.NoError(t, err)
	out, err := NewOutbound(ctx(t), cfg, src)
	require.NoError(t, err)
	f := &feeder{mb: src, upTo: 10}
	c := &checker{t: t, mb: dst}
	pump(t, func() bool { return c.next == 10 }, f, out, in, c)

	nc.Close()
	require.NoError(t, src.Send(1, []byte("message 000010")))
	var outErr, inErr error
	for i := 0; i < 100000 && (outErr == nil || inErr == nil); i++ {
		if outErr == nil {
			_, outErr = out.DoWork()
		}
		if inErr == nil {
			_, inErr = in.DoWork()
		}
		if i%1000 == 999 {
			time.Sleep(time.Millisecond)
		}
	}
	require.ErrorIs(t, outErr, agent.ErrTermination)
	require.ErrorIs(t, inErr, agent.ErrTermination)
	require.ErrorIs(t, outErr, nats.ErrConnectionClosed)
	require.ErrorIs(t, inErr, nats.ErrConnectionClosed)
	require.NoError(t, in.OnClose())
	require.Error(t, out.OnClose(), "the last message could not be published")
}

// Two outbound bridges on subjects under one wildcard, one inbound bridge
// on the wildcard: each source's messages arrive complete and in order,
// and no gap is counted although the two sequences interleave.
func TestCoreWildcardManySources(t *testing.T) {
	s := runServer(t, server.Options{})
	dst := newMailbox(t, 1<<20)
	inCfg := testConfig(s, "fills")
	inCfg.Subject = "duty.fills.>"
	in, err := NewInbound(ctx(t), inCfg, dst)
	require.NoError(t, err)
	const per = 2000
	var outs []*Outbound
	var agents []doer
	for v, venue := range []string{"a", "b"} {
		src := newMailbox(t, 1<<16)
		cfg := testConfig(s, "fills-"+venue)
		cfg.Subject = "duty.fills." + venue
		out, err := NewOutbound(ctx(t), cfg, src)
		require.NoError(t, err)
		outs = append(outs, out)
		base, sent := v*100000, 0
		agents = append(agents, doerFunc(func() (int, error) {
			k := 0
			for ; sent < per && sendMessage(src, base+sent) == nil; sent++ {
				k++
			}
			return k, nil
		}), out)
	}
	next := [2]int{0, 100000}
	total := 0
	agents = append(agents, doerFunc(func() (int, error) {
		return dst.Drain(func(m *mailbox.Message) mailbox.Action {
			var i int
			p := m.Parts()
			_, err := fmt.Sscanf(string(p[len(p)-1]), "message %d", &i)
			require.NoError(t, err)
			v := i / 100000
			require.Equal(t, next[v], i, "source %d: lost, duplicated or reordered", v)
			next[v]++
			total++
			return mailbox.Continue
		}, 1<<20)
	}))
	pump(t, func() bool { return total == 2*per }, agents...)
	for _, o := range outs {
		require.NoError(t, o.OnClose())
	}
	require.NoError(t, in.OnClose())
	st := in.Stats()
	require.Equal(t, int64(2*per), st.Delivered)
	require.Zero(t, st.LostBatches+st.Dropped)
}
