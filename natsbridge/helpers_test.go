package natsbridge

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/dutyrt/duty/mailbox"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// soak multiplies loop counts (DUTY_SOAK).
func soak() int {
	if n, err := strconv.Atoi(os.Getenv("DUTY_SOAK")); err == nil && n > 1 {
		return n
	}
	return 1
}

// runServer starts an embedded server on a loopback port (opts.Port, or a
// random one) and shuts it down at the end of the test.
func runServer(t testing.TB, opts server.Options) *server.Server {
	t.Helper()
	s := startServer(t, opts)
	require.True(t, s.ReadyForConnections(10*time.Second), "server not ready")
	return s
}

// startServer starts a server without waiting for it to be ready.
func startServer(t testing.TB, opts server.Options) *server.Server {
	t.Helper()
	opts.Host = "127.0.0.1"
	if opts.Port == 0 {
		opts.Port = -1
	}
	opts.NoLog, opts.NoSigs = true, true
	s, err := server.NewServer(&opts)
	require.NoError(t, err)
	s.Start()
	t.Cleanup(func() { stopServer(s) })
	return s
}

func stopServer(s *server.Server) {
	s.Shutdown()
	s.WaitForShutdown()
}

func jsServerOptions(t testing.TB) server.Options {
	return server.Options{JetStream: true, StoreDir: t.TempDir()}
}

func portOf(s *server.Server) int { return s.Addr().(*net.TCPAddr).Port }

// testConfig is a bridge config for server s with fast reconnects.
func testConfig(s *server.Server, name string) Config {
	return Config{
		Name:    name,
		Subject: "duty.test." + name,
		URL:     s.ClientURL(),
		Options: []nats.Option{nats.ReconnectWait(20 * time.Millisecond), nats.ReconnectJitter(0, 0)},
		Logger:  quiet,
	}
}

func jsConfig(s *server.Server, name string) Config {
	c := testConfig(s, name)
	c.JetStream = &JetStream{
		Stream:     "S" + name,
		AckTimeout: 300 * time.Millisecond,
		RetryWait:  20 * time.Millisecond,
		FetchWait:  200 * time.Millisecond,
		AckWait:    500 * time.Millisecond,
	}
	return c
}

func newMailbox(t testing.TB, capacity int) *mailbox.Mailbox {
	t.Helper()
	return newMailboxMax(t, capacity, 0)
}

func newMailboxMax(t testing.TB, capacity, maxMessage int) *mailbox.Mailbox {
	t.Helper()
	mb, err := mailbox.New(mailbox.Config{Name: t.Name(), Capacity: capacity, MaxMessageSize: maxMessage})
	require.NoError(t, err)
	return mb
}

func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

// feeder sends messages 0..n-1 into mb as fast as it takes them.
type feeder struct {
	mb   *mailbox.Mailbox
	sent int
	upTo int
}

func (f *feeder) DoWork() (int, error) {
	k := 0
	for ; f.sent < f.upTo && sendMessage(f.mb, f.sent) == nil; f.sent++ {
		k++
	}
	return k, nil
}

// doer is the part of agent.Agent the tests drive.
type doer interface{ DoWork() (int, error) }

// pump runs the agents' duty cycles on the test goroutine until done
// reports true; it fails the test if that takes more than 15 s (a hang
// guard, not a timing assertion). An idle round sleeps briefly: the
// client's goroutines need the CPU on a small machine.
func pump(t testing.TB, done func() bool, agents ...doer) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !done() {
		require.True(t, time.Now().Before(deadline), "pump: condition not reached")
		work := 0
		for _, a := range agents {
			n, err := a.DoWork()
			require.NoError(t, err)
			work += n
		}
		if work == 0 {
			time.Sleep(50 * time.Microsecond)
		}
	}
}

// message i of the test traffic: type id 1 + i%5, one part for even i, two
// parts for odd i.
func sendMessage(mb *mailbox.Mailbox, i int) error {
	body := []byte(fmt.Sprintf("message %06d", i))
	if i%2 == 0 {
		return mb.Send(int32(1+i%5), body)
	}
	return mb.SendParts(int32(1+i%5), []byte("hdr"), body)
}

// checker drains a mailbox and checks that message i arrives as message
// number i: nothing lost, duplicated or reordered.
type checker struct {
	t    testing.TB
	mb   *mailbox.Mailbox
	next int
	// from, if set, is the index the next message may skip ahead to
	// (core mode: losses are allowed but not duplicates or reorders).
	allowGaps bool
}

func (c *checker) drain(limit int) int {
	n, err := c.mb.Drain(func(m *mailbox.Message) mailbox.Action {
		var i int
		p := m.Parts()
		_, err := fmt.Sscanf(string(p[len(p)-1]), "message %d", &i)
		require.NoError(c.t, err)
		if c.allowGaps {
			require.GreaterOrEqual(c.t, i, c.next, "duplicate or reordered message")
		} else {
			require.Equal(c.t, c.next, i, "lost, duplicated or reordered message")
		}
		require.Equal(c.t, int32(1+i%5), m.TypeID())
		if i%2 == 0 {
			require.Len(c.t, p, 1)
		} else {
			require.Equal(c.t, []string{"hdr", fmt.Sprintf("message %06d", i)}, []string{string(p[0]), string(p[1])})
		}
		c.next = i + 1
		return mailbox.Continue
	}, limit)
	require.NoError(c.t, err)
	return n
}

// DoWork makes a checker a doer that drains everything.
func (c *checker) DoWork() (int, error) { return c.drain(1 << 20), nil }
