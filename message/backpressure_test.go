package message

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/childtest"
	"github.com/dutyrt/duty/internal/mailboxdef"
	"github.com/dutyrt/duty/ipc"
	"github.com/dutyrt/duty/mailbox"
)

// ping asks for a pong to ReplyTo, carrying ID back.
type ping struct {
	ID      uint64
	ReplyTo Address
}

type pong struct{ ID uint64 }

var (
	pings = MustFixed[ping](11)
	pongs = MustFixed[pong](12)
)

// childEnv names the role a child process of this package's tests runs.
const childEnv = "MESSAGE_TEST_CHILD"

func TestMain(m *testing.M) {
	childtest.Run(childEnv, map[string]func() error{"requester": requesterChild})
	os.Exit(m.Run())
}

// A reply the handler cannot send because the requester's mailbox is full
// is not lost: the handler returns the send's ErrBackPressured, the router
// leaves the request in the server's mailbox (mailbox.Abort) and the next
// drain delivers it again, until the reply fits. Every one of 100,000
// replies arrives exactly once through a reply mailbox of the smallest
// capacity, which the client drains more slowly than the server fills it.
func TestRepliesUnderBackPressureAreNeverLost(t *testing.T) {
	const n = 100_000
	server, err := mailbox.New(mailbox.Config{Name: "server"})
	require.NoError(t, err)
	client, err := mailbox.New(mailbox.Config{Name: "client", Capacity: mailboxdef.MinCapacity})
	require.NoError(t, err)

	sr := NewRouter()
	require.NoError(t, Handle(sr, pings, func(p *ping) error {
		return pongs.Send(client, &pong{ID: p.ID})
	}))
	seen := make([]uint8, n)
	got := 0
	cr := NewRouter()
	require.NoError(t, Handle(cr, pongs, func(p *pong) error {
		seen[p.ID]++
		got++
		return nil
	}))

	self := mustAddr(t, "client")
	sent := 0
	for idle := 0; idle < 3; {
		progress := 0
		for sent < n {
			if err := pings.Send(server, &ping{ID: uint64(sent), ReplyTo: self}); err != nil {
				require.ErrorIs(t, err, mailbox.ErrBackPressured)
				break
			}
			sent++
			progress++
		}
		k, err := server.DrainTo(sr, 64)
		require.NoError(t, err, "back-pressure is not a failure")
		progress += k
		k, err = client.DrainTo(cr, 5) // slower than the server: its mailbox fills
		require.NoError(t, err)
		progress += k
		if progress == 0 {
			idle++
		} else {
			idle = 0
		}
	}
	require.Equal(t, n, sent)
	require.Equal(t, n, got, "every reply delivered")
	for id, c := range seen {
		if c != 1 {
			t.Fatalf("reply %d delivered %d times", id, c)
		}
	}
	st := sr.Stats()
	require.Equal(t, int64(n), st.Delivered)
	require.Zero(t, st.Failed)
	require.Positive(t, st.Aborted, "the server was back-pressured")
	require.Positive(t, client.Stats().BackPressured)
	require.Equal(t, st.Aborted, client.Stats().BackPressured, "one refused send per abort")
}

// A handler that is back-pressured for ever loses nothing and is seen:
// its actor does no work, the router counts every abort, the reply
// mailbox counts every refused send, and the request waits at the head of
// the server's mailbox.
func TestHandlerBackPressuredForEverIsVisible(t *testing.T) {
	server, err := mailbox.New(mailbox.Config{Name: "server"})
	require.NoError(t, err)
	client, err := mailbox.New(mailbox.Config{Name: "client", Capacity: mailboxdef.MinCapacity})
	require.NoError(t, err)
	for client.Send(1, make([]byte, 8)) == nil { // nobody drains it
	}
	refusedBefore := client.Stats().BackPressured
	calls := 0
	sr := NewRouter()
	require.NoError(t, Handle(sr, pings, func(p *ping) error {
		calls++
		if err := pongs.Send(client, &pong{ID: p.ID}); err != nil {
			return fmt.Errorf("reply %d: %w", p.ID, err) // wrapped: still back-pressure
		}
		return nil
	}))
	require.NoError(t, pings.Send(server, &ping{ID: 1}))
	require.NoError(t, pings.Send(server, &ping{ID: 2}))
	actor, err := mailbox.NewReceiverActor("server", server, sr)
	require.NoError(t, err)
	for range 100 {
		work, err := actor.DoWork()
		require.NoError(t, err)
		require.Zero(t, work)
	}
	require.Equal(t, 100, calls, "the first request, again each cycle; never the second")
	st := sr.Stats()
	require.Equal(t, RouterStats{Aborted: 100}, st)
	require.Equal(t, refusedBefore+100, client.Stats().BackPressured)
	require.Positive(t, server.Stats().Depth, "the requests wait")

	// Room again: both replies go out, once each, in order.
	_, err = client.Drain(func(*mailbox.Message) mailbox.Action { return mailbox.Continue }, 1<<20)
	require.NoError(t, err)
	work, err := actor.DoWork()
	require.NoError(t, err)
	require.Equal(t, 2, work)
	var ids []uint64
	_, err = client.Drain(func(m *mailbox.Message) mailbox.Action {
		var p pong
		require.NoError(t, pongs.Decode(m.Payload(), &p))
		ids = append(ids, p.ID)
		return mailbox.Continue
	}, 1<<20)
	require.NoError(t, err)
	require.Equal(t, []uint64{1, 2}, ids)
	require.Equal(t, RouterStats{Delivered: 2, Aborted: 100}, sr.Stats())
}

// A reply to a requester whose process died is not retried: the
// registry's lookup (ipc.Dir) finds the consumer's process gone at once
// and returns mailbox.ErrConsumerDead, which is not back-pressure: the
// request is consumed and the error reported to the drain (and counted in
// Failed), never aborted for a full mailbox.
func TestReplyToDeadRequesterIsReportedNotRetried(t *testing.T) {
	dir := t.TempDir()
	child := childtest.Start(t, childEnv, "requester", "MESSAGE_TEST_DIR="+dir)
	require.Equal(t, "ready", child.Line(t))
	child.Kill(t) // SIGKILL: its mailbox file stays, full, never drained again

	reg := NewRegistry(ipc.Dir(dir))
	defer reg.Close()
	server, err := mailbox.New(mailbox.Config{Name: "server"})
	require.NoError(t, err)
	sr := NewRouter()
	require.NoError(t, Handle(sr, pings, func(p *ping) error {
		to, err := reg.Lookup(context.Background(), p.ReplyTo)
		if err != nil {
			return err
		}
		return pongs.Send(to, &pong{ID: p.ID})
	}))
	const n = 10
	for i := range n {
		require.NoError(t, pings.Send(server, &ping{ID: uint64(i), ReplyTo: mustAddr(t, "requester")}))
	}
	consumed := 0
	deadline := time.Now().Add(time.Minute) // a hang guard, not a timing assertion
	for consumed < n {
		require.True(t, time.Now().Before(deadline), "requests still queued: %+v", sr.Stats())
		k, err := server.DrainTo(sr, 64)
		consumed += k
		if err != nil {
			require.ErrorIs(t, err, mailbox.ErrConsumerDead)
		}
		if k == 0 {
			time.Sleep(time.Millisecond) // until the heartbeat is older than the timeout
		}
	}
	st := sr.Stats()
	require.Equal(t, int64(n), st.Failed, "every reply reported")
	require.Equal(t, int64(n), st.Delivered)
	require.Zero(t, st.Aborted, "a dead process is known at once, not after back-pressure")
	require.Zero(t, server.Stats().Depth)
}

// requesterChild creates a small reply mailbox file with a short consumer
// timeout, fills it, says "ready" and never drains it.
func requesterChild() error {
	mb, f, err := ipc.CreateMailbox(os.Getenv("MESSAGE_TEST_DIR"), "requester",
		mailbox.Config{Capacity: mailboxdef.MinCapacity}, ipc.WithConsumerTimeout(20*time.Millisecond))
	if err != nil {
		return err
	}
	defer f.Close()
	for mb.Send(1, make([]byte, 8)) == nil {
	}
	fmt.Println("ready")
	select {}
}

func mustAddr(t testing.TB, name string) Address {
	a, err := AddressOf(name)
	require.NoError(t, err)
	return a
}
