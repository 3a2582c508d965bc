package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/idle"
	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/natsbridge"
	"github.com/dutyrt/duty/ringbuf"
	"github.com/dutyrt/duty/runner"
)

// WN and WNL: 32-byte messages between two mailboxes through the NATS
// bridge (package natsbridge, core mode: mailbox -> Outbound -> NATS ->
// Inbound -> mailbox) against the NATS Go client publishing one NATS message per
// message to an asynchronous subscription (the naive use, the baseline),
// over an embedded nats-server on a loopback port that each repetition
// starts (docs/workloads.md, "WN and WNL: the NATS bridge"). Every
// message is checked on arrival: exactly once, in order.
//
// WN measures throughput: the producer keeps at most wnWindow messages
// sent and not yet checked, in both variants, so that neither the
// subscription's pending buffer (naive) nor the receiving mailbox (the
// bridge, which drops in core mode what a full mailbox refuses) overflows.
// WNL measures the one-way latency of each message, from the sender's
// clock reading just before it sends to the receiver's just after it
// received it, at a moderate rate (one message every wnlInterval); its
// bridge variant sends from an agent in one Composite with the outbound
// bridge, bridge-runner from a thread of its own to the outbound bridge on
// a runner.
var (
	wn = &workload{
		name:        "wn",
		kind:        kindThroughput,
		defaultN:    1_000_000,
		defaultReps: 5,
		variants: []variant{
			{name: "nats", run: wnNaive, goroutines: true, allocates: true},
			{name: "bridge", run: wnBridge, goroutines: true, allocates: true},
		},
	}
	wnl = &workload{
		name:        "wnl",
		kind:        kindLatency,
		defaultN:    20_000,
		defaultReps: 5,
		variants: []variant{
			{name: "nats", run: wnlNaive, goroutines: true, allocates: true},
			{name: "bridge", run: wnlBridgeShared, goroutines: true, allocates: true},
			{name: "bridge-runner", run: wnlBridgeRunner, goroutines: true, allocates: true},
		},
	}
)

func init() { registry = append(registry, wn, wnl) }

// wnProcs raises GOMAXPROCS for one repetition to the CPUs plus three, and
// returns the function that restores it. A runner's thread parks in
// nanosleep(2), a system call during which it keeps its P until the
// runtime's monitor takes it back (tens of microseconds to milliseconds
// later): with GOMAXPROCS at the CPU count, the bridge variants' two runners
// and the pacer would leave the client's and the server's goroutines
// waiting for a P, and the figure would be the Go scheduler's. Both
// variants of a workload run with the same setting.
func wnProcs() func() {
	prev := runtime.GOMAXPROCS(max(runtime.GOMAXPROCS(0), runtime.NumCPU()+3))
	return func() { runtime.GOMAXPROCS(prev) }
}

// wnDstCapacity is WN's receiving mailbox: it holds the whole window.
const wnDstCapacity = 1 << 26

const (
	wnSubject   = "dutybench.wn"
	wnWindow    = 1 << 20 // messages sent and not yet checked, at most
	wnlInterval = 50 * time.Microsecond
)

var wnQuiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// wnServer starts an embedded server on a free loopback port; the caller
// shuts it down with wnStop.
func wnServer() (*server.Server, error) {
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	if err != nil {
		return nil, fmt.Errorf("dutybench: nats-server: %w", err)
	}
	s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		wnStop(s)
		return nil, errors.New("dutybench: nats-server not ready")
	}
	return s, nil
}

func wnStop(s *server.Server) {
	s.Shutdown()
	s.WaitForShutdown()
}

// wnNaiveSetup connects a publisher and a subscriber whose callback runs
// onMsg for each message; the subscription buffers without limit (the
// producers bound what is outstanding).
func wnNaiveSetup(s *server.Server, onMsg func(*nats.Msg)) (pub, sub *nats.Conn, err error) {
	if pub, err = nats.Connect(s.ClientURL()); err != nil {
		return nil, nil, err
	}
	if sub, err = nats.Connect(s.ClientURL()); err != nil {
		pub.Close()
		return nil, nil, err
	}
	ss, err := sub.Subscribe(wnSubject, onMsg)
	if err == nil {
		err = ss.SetPendingLimits(-1, -1)
	}
	if err == nil {
		err = sub.Flush()
	}
	if err != nil {
		pub.Close()
		sub.Close()
		return nil, nil, err
	}
	return pub, sub, nil
}

// wnWaitDone waits for done, for the team's abort, or for lost (if not
// nil) to report a loss: a message that will never arrive.
func wnWaitDone(t *team, done <-chan struct{}, lost func() error) error {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return nil
		case <-tick.C:
			if t.abort.Load() {
				return errAborted
			}
			if lost != nil {
				if err := lost(); err != nil {
					return err
				}
			}
		}
	}
}

func wnNaive(cfg *runConfig) (time.Duration, error) {
	defer wnProcs()()
	s, err := wnServer()
	if err != nil {
		return 0, err
	}
	defer wnStop(s)
	n := cfg.n
	c := newChecker(1)
	t := newTeam(placement{}) // goroutines: the variant's threads place themselves
	var got atomic.Int64
	done := make(chan struct{})
	pub, sub, err := wnNaiveSetup(s, func(m *nats.Msg) {
		c.check(msgTypeID, m.Data)
		if got.Add(1) == int64(n) {
			t.finish()
			close(done)
		}
	})
	if err != nil {
		return 0, err
	}
	defer sub.Close()
	defer pub.Close()
	t.spawn(0, func() error {
		var p [payloadLen]byte
		putPayload(p[:], 0, 0)
		wait := idle.Backoff()
		for i := range n {
			putSeq(&p, seqFor(i, cfg.corruptAt))
			for int64(i)-got.Load() >= wnWindow {
				if t.abort.Load() {
					return errAborted
				}
				wait.Idle(0)
			}
			wait.Reset()
			if err := pub.Publish(wnSubject, p[:]); err != nil {
				return err
			}
		}
		if err := pub.Flush(); err != nil {
			return err
		}
		return wnWaitDone(t, done, nil)
	})
	d, err := t.run(cfg.timeout)
	if err != nil {
		return 0, err
	}
	return d, c.finish([]int{n})
}

// wnConsumer is the receiving side's agent in the bridge variants: it
// drains the receiving mailbox, checks every message and, with lat set,
// records its latency from sent. At the n-th message it ends the team's
// timed span and closes done.
type wnConsumer struct {
	mb   *mailbox.Mailbox
	c    *checker
	h    mailbox.Handler
	n    int
	got  atomic.Int64 // messages checked, read by the producer
	t    *team
	done chan struct{}
	sent []atomic.Int64 // latency: the sender's clock reading per message
	lat  []int64
	clk  clock
}

func newWNConsumer(mb *mailbox.Mailbox, n int, t *team, sent []atomic.Int64, lat []int64, clk clock) *wnConsumer {
	w := &wnConsumer{mb: mb, c: newChecker(1), n: n, t: t, done: make(chan struct{}), sent: sent, lat: lat, clk: clk}
	w.h = w.onMessage
	return w
}

func (w *wnConsumer) onMessage(m *mailbox.Message) mailbox.Action {
	if w.lat != nil {
		w.record(m.Payload())
	}
	w.c.check(m.TypeID(), m.Payload())
	return mailbox.Continue
}

// record stores the latency of the message with p's sequence number.
func (w *wnConsumer) record(p []byte) {
	now := w.clk.now()
	if len(p) == payloadLen {
		if seq := wnSeq(p); seq < uint64(len(w.lat)) {
			w.lat[seq] = now - w.sent[seq].Load()
		}
	}
}

func (w *wnConsumer) RoleName() string { return "wn-consumer" }
func (w *wnConsumer) OnStart() error   { return nil }
func (w *wnConsumer) OnClose() error   { return nil }

func (w *wnConsumer) DoWork() (int, error) {
	if w.c.received >= w.n {
		return 0, nil
	}
	k, err := w.mb.Drain(w.h, ringbuf.NoLimit)
	if k > 0 {
		w.got.Store(int64(w.c.received))
		if w.c.received >= w.n {
			w.t.finish()
			close(w.done)
		}
	}
	return k, err
}

// wnBridgePair is the bridge variants' set-up: a server, the sending and
// receiving mailboxes, the two bridges, the outbound agent on a runner and
// the consumer on another.
type wnBridgePair struct {
	s        *server.Server
	src, dst *mailbox.Mailbox
	in       *natsbridge.Inbound
	out      *natsbridge.Outbound
	runners  []*runner.Runner
}

// wnMaxPark bounds the parks of the bridge variants' runners.
const wnMaxPark = 20 * time.Microsecond

// wnIdle is the idle strategy of the bridge variants' runners: Agrona's
// backoff with parks of at most wnMaxPark on a thread with the least timer
// slack (lowTimerSlack), so that a message waits for a parked agent about
// one such park at most, not the default strategy's longest park.
func wnIdle() runner.Option {
	b, _ := idle.NewBackoff(idle.BackoffConfig{MaxSpins: 10, MaxYields: 5,
		MinPark: time.Microsecond, MaxPark: wnMaxPark})
	return runner.WithIdle(b)
}

func newWNBridgePair(consumer *wnConsumer, srcCap, dstCap int, sender func(src *mailbox.Mailbox) agent.Agent) (_ *wnBridgePair, err error) {
	p := &wnBridgePair{}
	defer func() {
		if err != nil {
			p.close()
		}
	}()
	if p.s, err = wnServer(); err != nil {
		return nil, err
	}
	if p.src, err = mailbox.New(mailbox.Config{Name: "wn-src", Capacity: srcCap, MaxMessageSize: 1024}); err != nil {
		return nil, err
	}
	if p.dst, err = mailbox.New(mailbox.Config{Name: "wn-dst", Capacity: dstCap}); err != nil {
		return nil, err
	}
	consumer.mb = p.dst
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	bc := natsbridge.Config{Name: "wn", Subject: wnSubject, URL: p.s.ClientURL(), Logger: wnQuiet}
	if p.in, err = natsbridge.NewInbound(ctx, bc, p.dst); err != nil {
		return nil, err
	}
	if p.out, err = natsbridge.NewOutbound(ctx, bc, p.src); err != nil {
		return nil, err
	}
	var sending agent.Agent = p.out
	if sender != nil {
		if sending, err = agent.NewComposite(sender(p.src), p.out); err != nil {
			return nil, err
		}
	}
	for _, a := range []agent.Agent{sending, consumer} {
		r, err := runner.New(a, wnIdle(), runner.WithTimerSlack(time.Microsecond), runner.WithCycleTiming(false))
		if err != nil {
			return nil, err
		}
		if err := r.Start(); err != nil {
			return nil, err
		}
		p.runners = append(p.runners, r)
	}
	return p, nil
}

// close stops the runners (the outbound's OnClose closes it) and the
// inbound bridge, and reports messages the inbound side dropped or lost.
func (p *wnBridgePair) close() error {
	var errs []error
	for _, r := range p.runners {
		errs = append(errs, r.Close())
	}
	if p.out != nil && p.runners == nil {
		errs = append(errs, p.out.OnClose())
	}
	if p.in != nil {
		errs = append(errs, p.lost(), p.in.OnClose())
	}
	if p.s != nil {
		wnStop(p.s)
	}
	return errors.Join(errs...)
}

// lost reports the messages the inbound bridge dropped (a full receiving
// mailbox) or lost (batches missing), an error wrapping errPayload.
func (p *wnBridgePair) lost() error {
	if st := p.in.Stats(); st.Dropped+st.LostBatches+st.Rejected > 0 {
		return fmt.Errorf("%w: the inbound bridge dropped %d messages, lost %d batches, rejected %d", errPayload, st.Dropped, st.LostBatches, st.Rejected)
	}
	return nil
}

func wnBridge(cfg *runConfig) (time.Duration, error) { return wnBridgeWith(cfg, wnDstCapacity) }

// wnBridgeWith is wnBridge with a receiving mailbox of dstCap bytes.
func wnBridgeWith(cfg *runConfig, dstCap int) (time.Duration, error) {
	defer wnProcs()()
	n := cfg.n
	t := newTeam(placement{}) // goroutines: the variant's threads place themselves
	cons := newWNConsumer(nil, n, t, nil, nil, clock{})
	p, err := newWNBridgePair(cons, 1<<20, dstCap, nil)
	if err != nil {
		return 0, err
	}
	t.spawn(0, func() error {
		var pl [payloadLen]byte
		putPayload(pl[:], 0, 0)
		wait := idle.Backoff()
		for i := range n {
			putSeq(&pl, seqFor(i, cfg.corruptAt))
			for k := 0; int64(i)-cons.got.Load() >= wnWindow; k++ {
				if t.abort.Load() {
					return errAborted
				}
				if k&1023 == 1023 {
					if err := p.lost(); err != nil {
						return err
					}
				}
				wait.Idle(0)
			}
			for {
				err := p.src.Send(msgTypeID, pl[:])
				if err == nil {
					break
				}
				if err != mailbox.ErrBackPressured {
					return err
				}
				if t.abort.Load() {
					return errAborted
				}
				wait.Idle(0)
			}
			wait.Reset()
		}
		return wnWaitDone(t, cons.done, p.lost)
	})
	d, err := t.run(cfg.timeout)
	err = errors.Join(err, p.close())
	if err != nil {
		return 0, err
	}
	return d, cons.c.finish([]int{n})
}

// wnlPace runs send(i) for i in 0..n-1, one every wnlInterval, on a thread
// of its own with a small timer slack: it sleeps until each send is due,
// and after a late wake-up it starts the schedule again from now rather
// than catch up in a burst. It records the clock reading before each send
// in sent.
func wnlPace(t *team, n int, sent []atomic.Int64, clk clock, send func(i int) error) error {
	runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
	lowTimerSlack()
	next := clk.now()
	for i := range n {
		if d := next - clk.now(); d > 0 {
			sleepFor(time.Duration(d))
		}
		if t.abort.Load() {
			return errAborted
		}
		now := clk.now()
		sent[i].Store(now)
		if err := send(i); err != nil {
			return err
		}
		next += int64(wnlInterval)
		if now > next {
			next = now + int64(wnlInterval)
		}
	}
	return nil
}

func wnlNaive(cfg *runConfig) (time.Duration, error) {
	defer wnProcs()()
	s, err := wnServer()
	if err != nil {
		return 0, err
	}
	defer wnStop(s)
	n, lat := cfg.n, cfg.lat[:cfg.n]
	c := newChecker(1)
	t := newTeam(placement{}) // goroutines: the variant's threads place themselves
	sent := make([]atomic.Int64, n)
	clk := newClock()
	done := make(chan struct{})
	pub, sub, err := wnNaiveSetup(s, func(m *nats.Msg) {
		now := clk.now()
		if len(m.Data) == payloadLen {
			if seq := wnSeq(m.Data); seq < uint64(n) {
				lat[seq] = now - sent[seq].Load()
			}
		}
		c.check(msgTypeID, m.Data)
		if c.received == n {
			t.finish()
			close(done)
		}
	})
	if err != nil {
		return 0, err
	}
	defer sub.Close()
	defer pub.Close()
	t.spawn(0, func() error {
		var p [payloadLen]byte
		putPayload(p[:], 0, 0)
		err := wnlPace(t, n, sent, clk, func(i int) error {
			putSeq(&p, seqFor(i, cfg.corruptAt))
			return pub.Publish(wnSubject, p[:])
		})
		if err != nil {
			return err
		}
		return wnWaitDone(t, done, nil)
	})
	d, err := t.run(cfg.timeout)
	if err != nil {
		return 0, err
	}
	return d, c.finish([]int{n})
}

// wnlBridgeShared is WNL's bridge variant: the sender is an agent in one
// duty cycle with the outbound bridge (agent.NewComposite), as an
// application agent and its bridge share a thread, so the bridge drains
// and publishes the message in the cycle that sent it.
func wnlBridgeShared(cfg *runConfig) (time.Duration, error) { return wnlBridgeRun(cfg, true) }

// wnlBridgeRunner is bridge-runner: the outbound bridge on a runner of its
// own, the sends paced from a thread of their own; the message waits for
// the bridge's next duty cycle.
func wnlBridgeRunner(cfg *runConfig) (time.Duration, error) { return wnlBridgeRun(cfg, false) }

func wnlBridgeRun(cfg *runConfig, shared bool) (time.Duration, error) {
	defer wnProcs()()
	n, lat := cfg.n, cfg.lat[:cfg.n]
	t := newTeam(placement{}) // goroutines: the variant's threads place themselves
	sent := make([]atomic.Int64, n)
	clk := newClock()
	cons := newWNConsumer(nil, n, t, sent, lat, clk)
	var snd *wnlSender
	var mk func(*mailbox.Mailbox) agent.Agent
	if shared {
		mk = func(src *mailbox.Mailbox) agent.Agent {
			snd = &wnlSender{src: src, n: n, sent: sent, clk: clk, corruptAt: cfg.corruptAt}
			putPayload(snd.p[:], 0, 0)
			return snd
		}
	}
	p, err := newWNBridgePair(cons, 1<<16, 1<<20, mk)
	if err != nil {
		return 0, err
	}
	t.spawn(0, func() error {
		if shared {
			snd.next.Store(clk.now()) // the start: the sender's first message is due
			return wnWaitDone(t, cons.done, p.lost)
		}
		var pl [payloadLen]byte
		putPayload(pl[:], 0, 0)
		err := wnlPace(t, n, sent, clk, func(i int) error {
			putSeq(&pl, seqFor(i, cfg.corruptAt))
			return p.src.Send(msgTypeID, pl[:]) // never full at this rate: an error fails the run
		})
		if err != nil {
			return err
		}
		return wnWaitDone(t, cons.done, p.lost)
	})
	d, err := t.run(cfg.timeout)
	err = errors.Join(err, p.close())
	if err != nil {
		return 0, err
	}
	return d, cons.c.finish([]int{n})
}

// wnSeq reads a payload's sequence number.
func wnSeq(p []byte) uint64 { return binary.LittleEndian.Uint64(p[0:8]) }

// wnlSender is the sending agent of WNL's bridge variant: it sends message i
// once it is due, one every wnlInterval from the start, and after a late
// cycle starts the schedule again from now rather than catch up in a
// burst.
type wnlSender struct {
	src       *mailbox.Mailbox
	n, i      int
	next      atomic.Int64 // when message i is due; 0 until the start
	sent      []atomic.Int64
	clk       clock
	p         [payloadLen]byte
	corruptAt int
}

func (s *wnlSender) RoleName() string { return "wnl-sender" }
func (s *wnlSender) OnStart() error   { return nil }
func (s *wnlSender) OnClose() error   { return nil }

func (s *wnlSender) DoWork() (int, error) {
	next := s.next.Load()
	if s.i == s.n || next == 0 {
		return 0, nil
	}
	now := s.clk.now()
	if now < next {
		return 0, nil
	}
	s.sent[s.i].Store(now)
	putSeq(&s.p, seqFor(s.i, s.corruptAt))
	if err := s.src.Send(msgTypeID, s.p[:]); err != nil {
		return 0, err // never full at this rate: an error fails the run
	}
	s.i++
	next += int64(wnlInterval)
	if now > next {
		next = now + int64(wnlInterval)
	}
	s.next.Store(next)
	return 1, nil
}
