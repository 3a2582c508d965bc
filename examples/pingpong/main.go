// Command pingpong measures the round trip between two agents that talk
// only through mailboxes: first in one process (two runners, two threads),
// then, with -ipc, across two processes through mailboxes in shared-memory
// files (the pong process is this binary started again with -role pong).
//
//	go run ./examples/pingpong                 # in one process
//	go run ./examples/pingpong -ipc            # ping here, pong in a child process
//	go run ./examples/pingpong -idle backoff   # idle strategy of both agents
//
// Ping sends a message carrying a sequence number, waits for it to come
// back, records the round trip in an HDR histogram, and sends the next;
// pong sends every message back. At the end ping prints the percentiles.
// Both agents hold *mailbox.Mailbox values and run unchanged in either
// mode: a mailbox in a shared file is the same type as one on the heap.
package main

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/idle"
	"github.com/dutyrt/duty/ipc"
	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/runner"
)

const (
	typePing int32 = 1
	typeStop int32 = 2
)

var epoch = time.Now()

func now() int64 { return int64(time.Since(epoch)) }

// pinger sends ping n, waits for it to come back, records the round trip.
type pinger struct {
	out      *mailbox.Mailbox
	in       *mailbox.Mailbox
	n        uint64
	sent     uint64
	received uint64
	waiting  bool
	t0       int64
	hist     *hdrhistogram.Histogram
	buf      [8]byte
	failure  error
	onPong   mailbox.Handler
}

func newPinger(out, in *mailbox.Mailbox, n uint64) *pinger {
	p := &pinger{out: out, in: in, n: n, hist: hdrhistogram.New(1, int64(10*time.Second), 3)}
	p.onPong = p.pong
	return p
}

func (p *pinger) RoleName() string { return "ping" }
func (p *pinger) OnStart() error   { return nil }
func (p *pinger) OnClose() error   { return nil }

func (p *pinger) pong(m *mailbox.Message) mailbox.Action {
	rtt := now() - p.t0
	if seq := binary.LittleEndian.Uint64(m.Payload()); seq != p.received {
		p.failure = fmt.Errorf("pong %d, want %d", seq, p.received)
	}
	_ = p.hist.RecordValue(rtt) // a round trip above the range (10 s) is not recorded
	p.received++
	p.waiting = false
	return mailbox.Continue
}

func (p *pinger) DoWork() (int, error) {
	work, err := p.in.Drain(p.onPong, 16)
	if err != nil {
		return work, err
	}
	if p.failure != nil {
		return work, agent.Terminate(p.failure)
	}
	if p.received == p.n {
		_ = p.out.Send(typeStop, nil)
		return work, agent.ErrDone
	}
	if !p.waiting {
		binary.LittleEndian.PutUint64(p.buf[:], p.sent)
		p.t0 = now()
		switch err := p.out.Send(typePing, p.buf[:]); {
		case err == nil:
			p.sent++
			p.waiting = true
			work++
		case errors.Is(err, mailbox.ErrBackPressured):
		default:
			return work, err
		}
	}
	return work, nil
}

// ponger sends every ping back; a stop message ends it.
type ponger struct {
	out     *mailbox.Mailbox
	in      *mailbox.Mailbox
	stopped bool
	onPing  mailbox.Handler
}

func newPonger(out, in *mailbox.Mailbox) *ponger {
	p := &ponger{out: out, in: in}
	p.onPing = p.ping
	return p
}

func (p *ponger) RoleName() string { return "pong" }
func (p *ponger) OnStart() error   { return nil }
func (p *ponger) OnClose() error   { return nil }

func (p *ponger) ping(m *mailbox.Message) mailbox.Action {
	if m.TypeID() == typeStop {
		p.stopped = true
		return mailbox.Break
	}
	if p.out.Send(typePing, m.Payload()) != nil {
		return mailbox.Abort // back-pressure: the same ping again next cycle
	}
	return mailbox.Continue
}

func (p *ponger) DoWork() (int, error) {
	n, err := p.in.Drain(p.onPing, 16)
	if err != nil {
		return n, err
	}
	if p.stopped {
		return n, agent.ErrDone
	}
	return n, nil
}

// runAgent runs a on a runner with the given idle spec and waits for it to
// stop by itself or for ctx to end.
func runAgent(ctx context.Context, a agent.Agent, idleSpec string) error {
	s, err := idle.Parse(idleSpec)
	if err != nil {
		return err
	}
	r, err := runner.New(a, runner.WithIdle(s))
	if err != nil {
		return err
	}
	if err := r.Start(); err != nil {
		return err
	}
	select {
	case <-r.Done():
	case <-ctx.Done():
	}
	if err := r.Close(); err != nil {
		return err
	}
	if err := r.Err(); err != nil {
		return err
	}
	return ctx.Err()
}

type config struct {
	n    uint64
	idle string
	ipc  bool
	role string
	dir  string
}

// inProcess runs ping and pong in this process, each on its own runner.
func inProcess(ctx context.Context, cfg config, out io.Writer) error {
	pings, err := mailbox.New(mailbox.Config{Name: "pings", Capacity: 4096})
	if err != nil {
		return err
	}
	pongs, err := mailbox.New(mailbox.Config{Name: "pongs", Capacity: 4096})
	if err != nil {
		return err
	}
	pong := newPonger(pongs, pings)
	ping := newPinger(pings, pongs, cfg.n)
	errc := make(chan error, 1)
	go func() { errc <- runAgent(ctx, pong, cfg.idle) }()
	err = runAgent(ctx, ping, cfg.idle)
	if perr := <-errc; err == nil {
		err = perr
	}
	if err != nil {
		return err
	}
	report(out, "in-process", ping.hist)
	return nil
}

// crossProcess runs ping here and pong in a child process; each owns (and
// drains) the mailbox file it receives on and opens the other's to send.
func crossProcess(ctx context.Context, cfg config, out io.Writer) error {
	base := ipc.DefaultDir()
	if err := os.MkdirAll(base, 0o700); err != nil {
		return err
	}
	dir, err := os.MkdirTemp(base, "pingpong-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	pongs, pongsFile, err := ipc.CreateMailbox(dir, "pongs", mailbox.Config{Capacity: 4096})
	if err != nil {
		return err
	}
	defer pongsFile.Close()
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	child := exec.CommandContext(ctx, exe, "-role", "pong", "-dir", dir, "-idle", cfg.idle)
	child.Stdout, child.Stderr = os.Stderr, os.Stderr
	if err := child.Start(); err != nil {
		return err
	}
	openCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	pings, pingsFile, err := ipc.OpenMailbox(openCtx, filepath.Join(dir, "pings"), ipc.WithWaitForFile())
	if err != nil {
		_ = child.Process.Kill()
		_ = child.Wait()
		return fmt.Errorf("opening the pong process's mailbox: %w", err)
	}
	defer pingsFile.Close()
	ping := newPinger(pings, pongs, cfg.n)
	err = runAgent(ctx, ping, cfg.idle)
	if werr := child.Wait(); err == nil && werr != nil {
		err = fmt.Errorf("pong process: %w", werr)
	}
	if err != nil {
		return err
	}
	report(out, "cross-process", ping.hist)
	return nil
}

// pongProcess is the child of crossProcess.
func pongProcess(ctx context.Context, cfg config) error {
	pings, pingsFile, err := ipc.CreateMailbox(cfg.dir, "pings", mailbox.Config{Capacity: 4096})
	if err != nil {
		return err
	}
	defer pingsFile.Close()
	openCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	pongs, pongsFile, err := ipc.OpenMailbox(openCtx, filepath.Join(cfg.dir, "pongs"))
	if err != nil {
		return err
	}
	defer pongsFile.Close()
	return runAgent(ctx, newPonger(pongs, pings), cfg.idle)
}

func report(out io.Writer, mode string, h *hdrhistogram.Histogram) {
	fmt.Fprintf(out, "%s round trips: %d\n", mode, h.TotalCount())
	for _, q := range []float64{50, 90, 99, 99.9} {
		fmt.Fprintf(out, "  p%-5v %8d ns\n", q, h.ValueAtQuantile(q))
	}
	fmt.Fprintf(out, "  max    %8d ns\n  mean   %8.0f ns\n", h.Max(), h.Mean())
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("pingpong", flag.ContinueOnError)
	var cfg config
	fs.Uint64Var(&cfg.n, "n", 200_000, "round trips")
	fs.StringVar(&cfg.idle, "idle", "spin", "idle strategy of both agents (idle.Parse syntax)")
	fs.BoolVar(&cfg.ipc, "ipc", false, "run pong in a second process, through shared-memory mailboxes")
	fs.StringVar(&cfg.role, "role", "", "internal: 'pong' runs the pong process of -ipc")
	fs.StringVar(&cfg.dir, "dir", "", "internal: the directory of the -ipc mailbox files")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case cfg.role == "pong":
		return pongProcess(ctx, cfg)
	case cfg.role != "":
		return fmt.Errorf("unknown role %q", cfg.role)
	case cfg.ipc:
		return crossProcess(ctx, cfg, out)
	default:
		return inProcess(ctx, cfg, out)
	}
}

func main() {
	runner.SetMaxProcs()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "pingpong:", err)
		os.Exit(1)
	}
}
