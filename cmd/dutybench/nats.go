package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
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

// WN and WNL (docs/workloads.md): the NATS bridge against the NATS client,
// over an embedded nats-server that each repetition starts. Every
// variant's threads place themselves: the team runs plain goroutines.

const (
	natsSubject = "dutybench.wn"
	// natsWindow bounds WN's messages sent and not yet checked, so that
	// neither the subscription's pending buffer nor the receiving mailbox
	// (core mode drops what a full one refuses) overflows.
	natsWindow      = 1 << 20
	natsInterval    = 50 * time.Microsecond // WNL's pace
	natsDstCapacity = 1 << 26               // WN's receiving mailbox: holds the whole window
	natsMaxPark     = 20 * time.Microsecond // the bridge variants' runners' longest park
)

// natsRepetition is what every variant's repetition holds; sent and clk
// are WNL's.
type natsRepetition struct {
	cfg  *runConfig
	s    *server.Server
	t    *team
	c    *checker
	got  atomic.Int64 // messages checked, read by the producer
	done chan struct{}
	sent []atomic.Int64 // WNL: the sender's clock reading per message
	clk  clock
	lost func() error // reports a message that will never arrive
	prev int          // GOMAXPROCS before
}

// natsServer starts an embedded server on a free loopback port and raises
// GOMAXPROCS to the CPUs plus three until released: a runner's thread
// parks in nanosleep(2) holding its P, and at the CPU count the bridge's
// two runners and the pacer would leave the client's and the server's
// goroutines waiting for one. Every variant runs with the same setting.
func natsServer(cfg *runConfig, latency bool) func() (*natsRepetition, func(), error) {
	return func() (*natsRepetition, func(), error) {
		r := &natsRepetition{cfg: cfg, t: newTeam(placement{}), c: newChecker(1), done: make(chan struct{}),
			clk: newClock(), lost: func() error { return nil }}
		r.prev = runtime.GOMAXPROCS(max(runtime.GOMAXPROCS(0), runtime.NumCPU()+3))
		if latency {
			r.sent = make([]atomic.Int64, cfg.n)
		}
		s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
		if err != nil {
			runtime.GOMAXPROCS(r.prev)
			return nil, nil, fmt.Errorf("dutybench: nats-server: %w", err)
		}
		r.s = s
		s.Start()
		if !s.ReadyForConnections(10 * time.Second) {
			r.close()
			return nil, nil, errors.New("dutybench: nats-server not ready")
		}
		return r, r.close, nil
	}
}

func (r *natsRepetition) close() {
	r.s.Shutdown()
	r.s.WaitForShutdown()
	runtime.GOMAXPROCS(r.prev)
}

// receive checks one arrived message (WNL: records its latency); the last
// one ends the timed span and closes done.
func (r *natsRepetition) receive(typeID int32, p []byte) {
	if r.sent != nil && len(p) == payloadLen {
		if seq := binary.LittleEndian.Uint64(p); seq < uint64(len(r.sent)) {
			r.cfg.lat[seq] = r.clk.now() - r.sent[seq].Load()
		}
	}
	r.c.check(typeID, p)
	if r.got.Add(1) == int64(r.cfg.n) {
		r.t.finish()
		close(r.done)
	}
}

// waitDone waits for the last message, the team's abort, or a loss.
func (r *natsRepetition) waitDone() error {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-r.done:
			return nil
		case <-tick.C:
			if r.t.abort.Load() {
				return errAborted
			}
			if err := r.lost(); err != nil {
				return err
			}
		}
	}
}

// send sends cfg.n messages with send: WN within the window, WNL paced.
func (r *natsRepetition) send(send func(p []byte) error) error {
	var p [payloadLen]byte
	putPayload(p[:], 0, 0)
	next := func(i int) []byte { putSeq(&p, seqFor(i, r.cfg.corruptAt)); return p[:] }
	if r.sent != nil {
		return r.pace(func(i int) error { return send(next(i)) })
	}
	wait := idle.Backoff()
	for i := range r.cfg.n {
		for k := 0; int64(i)-r.got.Load() >= natsWindow; k++ {
			if r.t.abort.Load() {
				return errAborted
			}
			wait.Idle(0)
			if k&1023 == 1023 {
				if err := r.lost(); err != nil {
					return err
				}
			}
		}
		wait.Reset()
		if err := send(next(i)); err != nil {
			return err
		}
	}
	return nil
}

// pace runs send(i) for i in [0, n), one every natsInterval, on a locked
// thread with a small timer slack; after a late wake-up it restarts the
// schedule from now rather than catch up in a burst.
func (r *natsRepetition) pace(send func(i int) error) error {
	runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
	lowTimerSlack()
	next := r.clk.now()
	for i := range r.cfg.n {
		if d := next - r.clk.now(); d > 0 {
			sleepFor(time.Duration(d))
		}
		if r.t.abort.Load() {
			return errAborted
		}
		if err := r.sendAt(i, &next, send); err != nil {
			return err
		}
	}
	return nil
}

// sendAt sends message i, recording its send time, and moves *next on by
// natsInterval (from now when late).
func (r *natsRepetition) sendAt(i int, next *int64, send func(i int) error) error {
	now := r.clk.now()
	if r.sent[i].Load() == 0 { // a retry keeps the first try's time
		r.sent[i].Store(now)
	}
	if err := send(i); err != nil {
		return err
	}
	*next += int64(natsInterval)
	if now > *next {
		*next = now + int64(natsInterval)
	}
	return nil
}

// run times the repetition: sender in slot 0, then waits for the last
// message, which the checker must have seen in order.
func (r *natsRepetition) run(sender func() error, closeErr func() error) (time.Duration, error) {
	r.t.spawn(0, func() error {
		if err := sender(); err != nil {
			return err
		}
		return r.waitDone()
	})
	d, err := r.t.run(r.cfg.timeout)
	if err = errors.Join(err, closeErr()); err != nil {
		return 0, err
	}
	return d, r.c.finish([]int{r.cfg.n})
}

// natsNaive is WN's and WNL's nats: a publisher connection and a
// subscriber connection whose callback checks each message; the
// subscription buffers without limit (the sender bounds what is
// outstanding).
//
//go:noinline // a variant factory: see runFunc
func natsNaive(latency bool) runFunc {
	return func(cfg *runConfig) (time.Duration, error) {
		return using(natsServer(cfg, latency), func(r *natsRepetition) (time.Duration, error) {
			pub, err := nats.Connect(r.s.ClientURL())
			if err != nil {
				return 0, err
			}
			defer pub.Close()
			sub, err := nats.Connect(r.s.ClientURL())
			if err != nil {
				return 0, err
			}
			defer sub.Close()
			ss, err := sub.Subscribe(natsSubject, func(m *nats.Msg) { r.receive(msgTypeID, m.Data) })
			if err == nil {
				err = ss.SetPendingLimits(-1, -1)
			}
			if err == nil {
				err = sub.Flush()
			}
			if err != nil {
				return 0, err
			}
			return r.run(func() error {
				if err := r.send(func(p []byte) error { return pub.Publish(natsSubject, p) }); err != nil {
					return err
				}
				return pub.Flush()
			}, func() error { return nil })
		})
	}
}

// natsConsumer is the bridge variants' receiving agent.
type natsConsumer struct {
	role
	r  *natsRepetition
	mb *mailbox.Mailbox
	h  mailbox.Handler
}

func (a *natsConsumer) DoWork() (int, error) {
	if a.r.got.Load() >= int64(a.r.cfg.n) {
		return 0, nil
	}
	return a.mb.Drain(a.h, ringbuf.NoLimit)
}

// natsBridgeRig is the bridge variants' set-up: the sending and receiving
// mailboxes, the two bridges, the sending agent on a runner and the
// consumer on another.
type natsBridgeRig struct {
	src     *mailbox.Mailbox
	in      *natsbridge.Inbound
	out     *natsbridge.Outbound
	runners []*runner.Runner
}

// newNATSBridgeRig builds the rig over r's server; sender, if not nil, is
// an agent sharing the outbound bridge's duty cycle (agent.Composite).
// The runners back off to parks of at most natsMaxPark with a low timer
// slack, so a message waits for a parked agent about one such park.
func newNATSBridgeRig(r *natsRepetition, srcCap, dstCap int, sender func(src *mailbox.Mailbox) agent.Agent) (_ *natsBridgeRig, err error) {
	g := &natsBridgeRig{}
	defer func() {
		if err != nil {
			err = errors.Join(err, g.close())
		}
	}()
	if g.src, err = mailbox.New(mailbox.Config{Name: "wn-src", Capacity: srcCap, MaxMessageSize: 1024}); err != nil {
		return g, err
	}
	cons := &natsConsumer{role: "wn-consumer", r: r}
	cons.h = func(m *mailbox.Message) mailbox.Action { r.receive(m.TypeID(), m.Payload()); return mailbox.Continue }
	if cons.mb, err = mailbox.New(mailbox.Config{Name: "wn-dst", Capacity: dstCap}); err != nil {
		return g, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	bc := natsbridge.Config{Name: "wn", Subject: natsSubject, URL: r.s.ClientURL(), Logger: slog.New(slog.DiscardHandler)}
	if g.in, err = natsbridge.NewInbound(ctx, bc, cons.mb); err != nil {
		return g, err
	}
	if g.out, err = natsbridge.NewOutbound(ctx, bc, g.src); err != nil {
		return g, err
	}
	r.lost = g.lost
	var sending agent.Agent = g.out
	if sender != nil {
		if sending, err = agent.NewComposite(sender(g.src), g.out); err != nil {
			return g, err
		}
	}
	for _, a := range []agent.Agent{sending, cons} {
		backoff, _ := idle.NewBackoff(idle.BackoffConfig{MaxSpins: 10, MaxYields: 5, MinPark: time.Microsecond, MaxPark: natsMaxPark})
		rn, err := startRunner(a, placement{}, 0, runner.WithIdle(backoff), runner.WithTimerSlack(time.Microsecond), runner.WithCycleTiming(false))
		if err != nil {
			return g, err
		}
		g.runners = append(g.runners, rn)
	}
	return g, nil
}

// close stops the runners (the outbound's OnClose closes it) and the
// inbound bridge, and reports what the inbound side dropped or lost.
func (g *natsBridgeRig) close() error {
	var errs []error
	for _, r := range g.runners {
		errs = append(errs, r.Close())
	}
	if g.out != nil && g.runners == nil {
		errs = append(errs, g.out.OnClose())
	}
	if g.in != nil {
		errs = append(errs, g.lost(), g.in.OnClose())
	}
	return errors.Join(errs...)
}

// lost reports the messages the inbound bridge dropped (a full receiving
// mailbox), lost or rejected: an error wrapping errPayload.
func (g *natsBridgeRig) lost() error {
	if st := g.in.Stats(); st.Dropped+st.LostBatches+st.Rejected > 0 {
		return fmt.Errorf("%w: the inbound bridge dropped %d messages, lost %d batches, rejected %d", errPayload, st.Dropped, st.LostBatches, st.Rejected)
	}
	return nil
}

// natsBridge is WN's bridge with a receiving mailbox of dstCap bytes.
//
//go:noinline // a variant factory: see runFunc
func natsBridge(dstCap int) runFunc {
	return func(cfg *runConfig) (time.Duration, error) {
		return using(natsServer(cfg, false), func(r *natsRepetition) (time.Duration, error) {
			g, err := newNATSBridgeRig(r, 1<<20, dstCap, nil)
			if err != nil {
				return 0, err
			}
			wait := idle.Backoff()
			w := mailboxWriter{g.src}
			return r.run(func() error {
				return r.send(func(p []byte) error {
					err := produceOne(r.t, w, p, mailbox.ErrBackPressured, func() { wait.Idle(0) })
					wait.Reset() // each message starts its back-off afresh
					return err
				})
			}, g.close)
		})
	}
}

// natsBridgeLatency is WNL's bridge (shared: the sender an agent in one
// duty cycle with the outbound bridge) and bridge-runner (the outbound
// bridge on a runner of its own, the sends paced from another thread).
//
//go:noinline // a variant factory: see runFunc
func natsBridgeLatency(shared bool) runFunc {
	return func(cfg *runConfig) (time.Duration, error) {
		return using(natsServer(cfg, true), func(r *natsRepetition) (time.Duration, error) {
			var snd *natsSender
			var mk func(*mailbox.Mailbox) agent.Agent
			if shared {
				mk = func(src *mailbox.Mailbox) agent.Agent {
					snd = &natsSender{role: "wnl-sender", r: r, src: src}
					putPayload(snd.p[:], 0, 0)
					return snd
				}
			}
			g, err := newNATSBridgeRig(r, 1<<16, 1<<20, mk)
			if err != nil {
				return 0, err
			}
			return r.run(func() error {
				if shared {
					snd.next.Store(r.clk.now()) // the start: the first message is due
					return nil
				}
				// Full only while the bridge's runner is held up: the
				// message waits (its latency counts from its due time).
				return r.send(func(p []byte) error {
					return r.t.retry(mailbox.ErrBackPressured, func() error { return g.src.Send(msgTypeID, p) })
				})
			}, g.close)
		})
	}
}

// natsSender is the sending agent of WNL's bridge: it sends message i once
// it is due, as pace does, on the bridge's duty cycle.
type natsSender struct {
	role
	r    *natsRepetition
	src  *mailbox.Mailbox
	i    int
	next atomic.Int64 // when message i is due; 0 until the start
	p    [payloadLen]byte
}

func (s *natsSender) DoWork() (int, error) {
	next := s.next.Load()
	if s.i == s.r.cfg.n || next == 0 || s.r.clk.now() < next {
		return 0, nil
	}
	err := s.r.sendAt(s.i, &next, func(i int) error {
		putSeq(&s.p, seqFor(i, s.r.cfg.corruptAt))
		return s.src.Send(msgTypeID, s.p[:])
	})
	if errors.Is(err, mailbox.ErrBackPressured) {
		// Full only after a stall of this thread, whose bridge drains the
		// mailbox: the message goes on a later cycle, its latency counted
		// from the first try.
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	s.i++
	s.next.Store(next)
	return 1, nil
}
