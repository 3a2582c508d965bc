package natsbridge

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/ipc/publication"
	"github.com/dutyrt/duty/mailbox"
)

// An IPC publication's subscription as the outbound source: every message
// offered arrives in the remote mailbox in order, and the end of the
// publication's stream ends the agent once the last batch is published.
func TestOutboundFromSubscription(t *testing.T) {
	s := runServer(t, server.Options{})
	pub, err := publication.Create(t.TempDir(), "quotes", 64<<10)
	require.NoError(t, err)
	defer pub.Close()
	c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	sub, err := publication.OpenSubscription(c, pub.File().Path())
	require.NoError(t, err)
	defer sub.Close()

	dst := newMailbox(t, 1<<20)
	cfg := testConfig(s, "ipcsub")
	in, err := NewInbound(ctx(t), cfg, dst)
	require.NoError(t, err)
	out, err := NewOutboundFromSubscription(ctx(t), cfg, sub)
	require.NoError(t, err)

	n := 3000
	for i := range n {
		for {
			if _, err := pub.Offer(int32(1+i%5), fmt.Appendf(nil, "quote %06d", i)); err == nil {
				break
			}
			_, err := out.DoWork() // the publication is full: let the bridge poll
			require.NoError(t, err)
		}
	}
	require.NoError(t, pub.Close())
	var end error
	pump(t, func() bool { return end != nil }, doerFunc(func() (int, error) {
		n, err := out.DoWork()
		end = err
		return n, nil
	}))
	require.ErrorIs(t, end, agent.ErrDone, "the end of the stream ends the agent")
	require.NoError(t, out.OnClose())
	require.Equal(t, int64(n), out.Stats().Batched)

	seen := 0
	pump(t, func() bool {
		_, err := dst.Drain(func(m *mailbox.Message) mailbox.Action {
			require.Equal(t, fmt.Sprintf("quote %06d", seen), string(m.Payload()))
			require.Equal(t, int32(1+seen%5), m.TypeID())
			seen++
			return mailbox.Continue
		}, 1<<20)
		require.NoError(t, err)
		return seen == n
	})
	require.NoError(t, in.OnClose())
}
