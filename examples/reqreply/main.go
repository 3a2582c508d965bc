// Command reqreply is a client agent that asks a server agent for quotes
// and correlates the replies, written with duty's actor API: typed
// messages (message.Fixed), a router per agent, reply addresses resolved
// by a message.Registry, calls with deadlines (message.Calls) answered
// with Fixed.Reply, and a runner.Group that restarts nothing and ends when
// the client is done.
//
//	go run ./examples/reqreply          # both agents in this process
//	go run ./examples/reqreply -fx      # the same agents, wired by go.uber.org/fx
//	go run ./examples/reqreply -ipc     # the server in a second process, through mailbox files
//
// The agents are the same in every mode: only where their mailboxes live
// and who starts them changes.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/message"
	"github.com/dutyrt/duty/runner"
)

// The messages: fixed layouts, sent as their own bytes. A request starts
// with a RequestHeader, a reply with a ReplyHeader: Calls and Reply fill
// them in.
type Quote struct {
	message.RequestHeader
	Qty int64
}

type Ack struct {
	message.ReplyHeader
	Filled int64
}

var (
	Quotes = message.MustFixed[Quote](1)
	Acks   = message.MustFixed[Ack](2)
)

// server fills every quote and replies to its sender.
type server struct {
	in     *mailbox.Mailbox
	reg    *message.Registry
	router *message.Router
	stop   bool // asked to end (-ipc)
}

func newServer(in *mailbox.Mailbox, reg *message.Registry) *server {
	s := &server{in: in, reg: reg, router: message.NewRouter()}
	_ = message.Handle(s.router, Quotes, func(q *Quote) error {
		return Acks.Reply(reg, q.RequestHeader, &Ack{Filled: q.Qty}) // full: q waits for the next cycle
	})
	return s
}

func (s *server) RoleName() string { return "server" }
func (s *server) OnStart() error   { return nil }
func (s *server) OnClose() error   { return s.reg.Close() }
func (s *server) DoWork() (int, error) {
	n, err := s.in.DrainTo(s.router, 64)
	if s.stop {
		return n, agent.ErrDone
	}
	return n, err
}

// client sends n quotes, one call each, and stops when every call has
// ended.
type client struct {
	in, server *mailbox.Mailbox
	router     *message.Router
	calls      *message.Calls[Quote, Ack, int64]
	n, sent    int
	filled     int64
	late       int
	out        io.Writer
}

func newClient(in, server *mailbox.Mailbox, self message.Address, n int, out io.Writer) (*client, error) {
	c := &client{in: in, server: server, router: message.NewRouter(), n: n, out: out}
	var err error
	c.calls, err = message.NewCalls(c.router, Quotes, Acks, self, func(qty int64, a *Ack, err error) {
		if err != nil {
			c.late++ // message.ErrTimeout
			return
		}
		c.filled += a.Filled
	})
	return c, err
}

func (c *client) RoleName() string { return "client" }
func (c *client) OnStart() error   { return nil }
func (c *client) OnClose() error {
	fmt.Fprintf(c.out, "%d quotes, %d filled, %d timed out\n", c.sent, c.filled, c.late)
	return nil
}

func (c *client) DoWork() (int, error) {
	work := c.calls.Poll()
	if c.sent < c.n {
		qty := int64(c.sent + 1)
		switch err := c.calls.Ask(c.server, &Quote{Qty: qty}, qty); {
		case err == nil:
			c.sent++
			work++
		case !errors.Is(err, mailbox.ErrBackPressured): // full: ask again next cycle
			return work, err
		}
	}
	n, err := c.in.DrainTo(c.router, 64)
	if err == nil && c.sent == c.n && c.calls.Pending() == 0 {
		return n + work, agent.ErrDone
	}
	return n + work, err
}

// inProcess runs both agents in one runner.Group.
func inProcess(ctx context.Context, n int, out io.Writer) error {
	reg := message.NewRegistry(nil)
	serverBox, _ := mailbox.New(mailbox.Config{Name: "server"})
	clientBox, _ := mailbox.New(mailbox.Config{Name: "client"})
	if _, err := reg.Register("server", serverBox); err != nil {
		return err
	}
	self, err := reg.Register("client", clientBox)
	if err != nil {
		return err
	}
	c, err := newClient(clientBox, serverBox, self, n, out)
	if err != nil {
		return err
	}
	return runGroup(ctx, runner.Member{Agent: newServer(serverBox, reg)}, runner.Member{Agent: c})
}

// runGroup runs members until one completes, and reports why the group
// ended.
func runGroup(ctx context.Context, members ...runner.Member) error {
	g, err := runner.NewGroup(members, runner.StopWhenDone())
	if err != nil {
		return err
	}
	if err := g.Start(ctx); err != nil {
		return err
	}
	select {
	case <-g.Done():
		return errors.Join(g.Err(), g.Close(context.Background()))
	case <-ctx.Done():
		return errors.Join(ctx.Err(), g.Close(context.Background()))
	}
}

func main() {
	runner.SetMaxProcs()
	var (
		n     = flag.Int("n", 100_000, "quotes to send")
		useFx = flag.Bool("fx", false, "wire the agents with go.uber.org/fx")
		inIPC = flag.Bool("ipc", false, "run the server in a second process")
		role  = flag.String("role", "", "internal: the server process (-ipc)")
		dir   = flag.String("dir", "", "internal: the mailbox directory (-ipc)")
	)
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var err error
	switch {
	case *role == "server":
		err = serveProcess(ctx, *dir)
	case *inIPC:
		err = crossProcess(ctx, *n, os.Stdout, func(dir string) *exec.Cmd {
			exe, _ := os.Executable()
			return exec.CommandContext(ctx, exe, "-role", "server", "-dir", dir)
		})
	case *useFx:
		err = withFx(ctx, *n, os.Stdout)
	default:
		err = inProcess(ctx, *n, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "reqreply:", err)
		os.Exit(1)
	}
}
