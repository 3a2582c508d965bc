// Command fx shows how a user adds agents of their own to a go.uber.org/fx
// application run by duty's dutyfx.Runners:
//
//   - a plain agent.Agent of the user's (Greeter), which sends a greeting
//     into a mailbox every few duty cycles;
//   - an actor (mailbox.NewActor) that owns that mailbox and answers each
//     greeting by counting it.
//
// Each role is one fx module that provides its agent (dutyfx.AsAgent, or
// dutyfx.Include to keep its own type in the graph); dutyfx.Runners starts
// them on their own locked threads when the application starts and closes
// them, in reverse order, when it stops.
//
//	go run ./examples/fx -duration 2s
package main

import (
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"go.uber.org/fx"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/dutyfx"
	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/runner"
)

// typeGreeting is the message type id of a greeting.
const typeGreeting int32 = 1

// Greeter is a user's own agent: every Every duty cycles it sends one
// greeting, carrying a sequence number, to the greetings mailbox. A full
// mailbox is back-pressure: it tries again next cycle.
type Greeter struct {
	Out   *mailbox.Mailbox
	Every int

	cycles int
	next   uint64
	buf    [8]byte
	Sent   atomic.Uint64
}

func (g *Greeter) RoleName() string { return "greeter" }
func (g *Greeter) OnStart() error   { return nil }
func (g *Greeter) OnClose() error   { return nil }

// DoWork is one duty cycle: pure work, no sleeping (the runner idles).
func (g *Greeter) DoWork() (int, error) {
	g.cycles++
	if g.cycles%g.Every != 0 {
		return 0, nil
	}
	binary.LittleEndian.PutUint64(g.buf[:], g.next)
	switch err := g.Out.Send(typeGreeting, g.buf[:]); err {
	case nil:
		g.next++
		g.Sent.Store(g.next)
		return 1, nil
	case mailbox.ErrBackPressured:
		return 0, nil
	default:
		return 0, err
	}
}

// Tally counts greetings and checks they arrive in order.
type Tally struct {
	Received atomic.Uint64
	expected uint64
	OutOfSeq atomic.Uint64
}

func (t *Tally) handle(m *mailbox.Message) mailbox.Action {
	if seq := binary.LittleEndian.Uint64(m.Payload()); seq != t.expected {
		t.OutOfSeq.Add(1)
	}
	t.expected++
	t.Received.Add(1)
	return mailbox.Continue
}

// GreetingsModule provides the mailbox both roles share.
var GreetingsModule = fx.Module("greetings",
	fx.Provide(func() (*mailbox.Mailbox, error) {
		return mailbox.New(mailbox.Config{Name: "greetings", Capacity: 16 << 10})
	}),
)

// GreeterModule provides the user's agent into dutyfx.Runners's group, and
// the agent itself for whoever wants its counters.
var GreeterModule = fx.Module("greeter",
	fx.Provide(func(out *mailbox.Mailbox) *Greeter { return &Greeter{Out: out, Every: 10} }),
	dutyfx.Include[*Greeter](),
)

// TallyModule provides the actor that drains the greetings mailbox.
var TallyModule = fx.Module("tally",
	fx.Provide(func() *Tally { return &Tally{} }),
	fx.Provide(dutyfx.AsAgent(func(in *mailbox.Mailbox, t *Tally) (agent.Agent, error) {
		return mailbox.NewActor("tally", in, t.handle, mailbox.WithCloseMode(mailbox.Drain))
	})),
)

// run builds the application, runs it until ctx ends, stops it and prints
// what happened. It returns the process exit status.
func run(ctx context.Context, out io.Writer) int {
	var (
		g     *Greeter
		t     *Tally
		group *runner.Group
	)
	app := fx.New(
		fx.NopLogger,
		dutyfx.Runners,
		fx.Supply(dutyfx.Config{DefaultIdle: "backoff", Order: []string{"tally", "greeter"}}),
		GreetingsModule, GreeterModule, TallyModule,
		fx.Populate(&g, &t, &group),
	)
	if err := app.Start(ctx); err != nil {
		fmt.Fprintln(out, "start:", err)
		return 1
	}
	<-ctx.Done()
	stopCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := app.Stop(stopCtx); err != nil {
		fmt.Fprintln(out, "stop:", err)
		return 1
	}
	for _, r := range group.Runners() {
		st := r.Stats()
		fmt.Fprintf(out, "%-8s duty cycles %d, work %d, errors %d\n", st.Role, st.DutyCycles, st.TotalWork, st.Errors)
	}
	sent, received := g.Sent.Load(), t.Received.Load()
	fmt.Fprintf(out, "greetings sent %d, received %d, out of order %d\n", sent, received, t.OutOfSeq.Load())
	if sent != received || t.OutOfSeq.Load() != 0 {
		fmt.Fprintln(out, "lost or reordered greetings")
		return 1
	}
	return 0
}

func main() {
	runner.SetMaxProcs()
	duration := flag.Duration("duration", 2*time.Second, "how long to run")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *duration)
	defer cancel()
	os.Exit(run(ctx, os.Stdout))
}
