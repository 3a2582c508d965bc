package natsbridge

import (
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/clock"
)

// A batch goes out in the cycle whose drain left the mailbox empty, with
// no wait for FlushInterval (the manual clock never moves); while a drain
// takes DrainLimit messages, more may be queued and the batch goes on
// filling.
func TestOutboundFlushesWhenDrainedEmpty(t *testing.T) {
	s := runServer(t, server.Options{})
	src, dst := newMailbox(t, 1<<16), newMailbox(t, 1<<20)
	cfg := testConfig(s, "nagle")
	cfg.Clock = clock.NewManual(time.Unix(0, 0))
	cfg.FlushInterval = time.Hour
	cfg.DrainLimit = 2
	in, err := NewInbound(ctx(t), cfg, dst)
	require.NoError(t, err)
	out, err := NewOutbound(ctx(t), cfg, src)
	require.NoError(t, err)

	require.NoError(t, sendMessage(src, 0))
	_, err = out.DoWork()
	require.NoError(t, err)
	require.Equal(t, int64(1), out.Stats().Published, "one message, the mailbox drained empty: published at once")

	for i := 1; i <= 5; i++ {
		require.NoError(t, sendMessage(src, i))
	}
	for range 2 { // two drains of DrainLimit: more may be queued
		_, err = out.DoWork()
		require.NoError(t, err)
		require.Equal(t, int64(1), out.Stats().Published, "a drain of DrainLimit messages keeps the batch open")
	}
	_, err = out.DoWork() // drains the fifth, finds the mailbox empty
	require.NoError(t, err)
	require.Equal(t, int64(2), out.Stats().Published)
	require.Equal(t, int64(6), out.Stats().Batched)

	c := &checker{t: t, mb: dst}
	pump(t, func() bool { return c.next == 6 }, c)
	require.NoError(t, out.OnClose())
	require.NoError(t, in.OnClose())
	require.Equal(t, int64(6), in.Stats().Delivered)
}
