package main

// WA and WAL: typed messages through actors, as a user of duty's actor API
// writes them (docs/workloads.md, "WA and WAL"). Each receiving actor is a
// mailbox.Actor draining into a message.Router, run by a runner.Runner
// with the idle strategy the variant names; with -tags protoactor the same
// workloads run through protoactor-go (actors_protoactor.go), the
// baseline.

import (
	"fmt"
	"sync"
	"time"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/idle"
	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/message"
	"github.com/dutyrt/duty/runner"
)

// actorIdle makes the idle strategy of an actor draining mb.
type actorIdle func(mb *mailbox.Mailbox) (idle.Strategy, error)

// actorIdles are duty's variants of WA and WAL, by name: the runner's
// default (a new idle.Backoff()), a busy spin, and the mailbox's wake
// strategy (the agent sleeps until a message arrives).
var actorIdles = []struct {
	name string
	make actorIdle
}{
	{"backoff", func(*mailbox.Mailbox) (idle.Strategy, error) { return idle.Backoff(), nil }},
	{"spin", func(*mailbox.Mailbox) (idle.Strategy, error) { return idle.BusySpin(), nil }},
	{"wake", func(mb *mailbox.Mailbox) (idle.Strategy, error) {
		return mailbox.NewWakeIdle(mailbox.WakeConfig{}, mb)
	}},
}

// actorVariants are WA's (latency false) or WAL's variants: protoactor-go's
// first where built, the baseline, then duty's.
func actorVariants(latency bool) []variant {
	vs := protoactorVariants(latency)
	for _, a := range actorIdles {
		run := actorStream(a.make)
		if latency {
			run = actorPingPong(a.make)
		}
		vs = append(vs, std(a.name, run))
	}
	return vs
}

// checkMsg is check on a benchMsg's fields (one producer, id 0).
func (c *checker) checkMsg(m *benchMsg) {
	c.received++
	if m.Producer != 0 || m.Seq != c.expected[0] {
		c.wrongSequence(m.Seq, m.Producer)
		return
	}
	c.expected[0]++
}

// lastMessage is how a receiving actor tells the team it has taken its
// last message: it records the time and closes done.
type lastMessage struct {
	n    int
	done chan struct{}
	end  time.Time // written before done is closed, read after
}

func newLastMessage(n int) *lastMessage { return &lastMessage{n: n, done: make(chan struct{})} }

// seen is called by the actor after each message it checked with c.
func (l *lastMessage) seen(c *checker) {
	if c.received == l.n {
		l.end = time.Now()
		close(l.done)
	}
}

// abortSignal is a team closer: a failure closes ch, so that a member
// waiting for an actor returns.
type abortSignal struct {
	once sync.Once
	ch   chan struct{}
}

func newAbortSignal() *abortSignal { return &abortSignal{ch: make(chan struct{})} }

func (a *abortSignal) Close() error { a.once.Do(func() { close(a.ch) }); return nil }

// await waits until the actor has taken its last message (returning its
// time), the team failed (abort), or the actor's runner stopped (stopped,
// nil for protoactor: its actors do not stop on their own).
func (l *lastMessage) await(abort *abortSignal, stopped <-chan struct{}, why func() error) (time.Time, error) {
	select {
	case <-l.done:
		return l.end, nil
	case <-abort.ch:
		return time.Time{}, errAborted
	case <-stopped:
		return time.Time{}, fmt.Errorf("dutybench: the receiving actor stopped: %w", why())
	}
}

// startActor starts a runner for a, in the placement's slot (pinned when
// the run pins) with idle strategy s.
func startActor(a agent.Agent, s idle.Strategy, place placement, slot int) (*runner.Runner, error) {
	opts := []runner.Option{runner.WithIdle(s)}
	if cpu := place.cpu(slot); cpu >= 0 {
		opts = append(opts, runner.WithCPUs(cpu))
	}
	r, err := runner.New(a, opts...)
	if err != nil {
		return nil, err
	}
	if err := r.Start(); err != nil {
		return nil, err
	}
	return r, nil
}

// stoppedErr is the error of a runner that stopped before its last
// message.
func stoppedErr(r *runner.Runner) func() error {
	return func() error {
		if err := r.Err(); err != nil {
			return err
		}
		return errAborted
	}
}

// actorStream is WA's duty variant: the producer (slot 0) sends each
// message as a benchMsg with (*message.Fixed).Send, spinning while the
// mailbox is back-pressured; the consumer is an actor of a message.Router
// on a runner (slot 1) with the idle strategy newIdle makes.
func actorStream(newIdle actorIdle) runFunc {
	return func(cfg *runConfig) (time.Duration, error) {
		mb, err := newBenchMailbox("wa")
		if err != nil {
			return 0, err
		}
		c, last := newChecker(1), newLastMessage(cfg.n)
		r := message.NewRouter()
		if err := message.Handle(r, benchMsgs, func(m *benchMsg) error {
			c.checkMsg(m)
			last.seen(c)
			return nil
		}); err != nil {
			return 0, err
		}
		actor, err := mailbox.NewReceiverActor("wa-consumer", mb, r)
		if err != nil {
			return 0, err
		}
		s, err := newIdle(mb)
		if err != nil {
			return 0, err
		}
		rn, err := startActor(actor, s, cfg.place, 1)
		if err != nil {
			return 0, err
		}
		defer rn.Close()
		abort := newAbortSignal()
		t := newTeam(cfg.place, abort)
		w := typedWriter{mb: mb, m: new(benchMsg)}
		t.spawn(0, func() error { return produce(t, w, cfg.n, 0, cfg.corruptAt, mailbox.ErrBackPressured, nil) })
		t.spawn(1, func() error {
			end, err := last.await(abort, rn.Done(), stoppedErr(rn))
			if err != nil {
				return err
			}
			t.end = end
			return c.finish([]int{cfg.n})
		})
		return t.run(cfg.timeout)
	}
}

// actorPingPong is WAL's duty variant: two actors, each with its mailbox
// and an idle strategy newIdle makes. The ponger, on a runner (slot 1),
// sends each ping back as it takes it. The pinger is driven by the timing
// goroutine (slot 0) as its runner would drive it: it sends a ping, then
// runs the pinger's duty cycle (DoWork, then the idle strategy) until the
// pong arrived.
func actorPingPong(newIdle actorIdle) runFunc {
	return func(cfg *runConfig) (time.Duration, error) {
		pings, err := newBenchMailbox("pings")
		if err != nil {
			return 0, err
		}
		pongs, err := newBenchMailbox("pongs")
		if err != nil {
			return 0, err
		}
		pc, c, last := newChecker(1), newChecker(1), newLastMessage(cfg.n)
		pongRoutes, pingRoutes := message.NewRouter(), message.NewRouter()
		// The pong is sent first: a back-pressured send leaves the ping for
		// the next drain, with nothing done (message.Handle).
		if err := message.Handle(pongRoutes, benchMsgs, func(m *benchMsg) error {
			if err := benchMsgs.Send(pongs, m); err != nil {
				return err
			}
			c.checkMsg(m)
			last.seen(c)
			return nil
		}); err != nil {
			return 0, err
		}
		if err := message.Handle(pingRoutes, benchMsgs, func(m *benchMsg) error {
			pc.checkMsg(m)
			return nil
		}); err != nil {
			return 0, err
		}
		ponger, err := mailbox.NewReceiverActor("wal-ponger", pings, pongRoutes)
		if err != nil {
			return 0, err
		}
		pinger, err := mailbox.NewReceiverActor("wal-pinger", pongs, pingRoutes)
		if err != nil {
			return 0, err
		}
		ponging, err := newIdle(pings)
		if err != nil {
			return 0, err
		}
		pinging, err := newIdle(pongs)
		if err != nil {
			return 0, err
		}
		rn, err := startActor(ponger, ponging, cfg.place, 1)
		if err != nil {
			return 0, err
		}
		defer rn.Close()
		abort := newAbortSignal()
		t := newTeam(cfg.place, abort)
		w := &typedWriter{mb: pings, m: new(benchMsg)} // a pointer: no allocation to make it a writer per round trip
		return roundTrips(cfg, t, pc, c, func(p []byte) error {
			if err := produceOne(t, w, p, mailbox.ErrBackPressured, nil); err != nil {
				return err
			}
			return driveUntil(t, pinger, pinging, pc, pc.received+1)
		}, func() error {
			_, err := last.await(abort, rn.Done(), stoppedErr(rn))
			return err
		})
	}
}

// driveUntil runs a's duty cycle with idle strategy s, as a runner would,
// until c has seen n messages.
func driveUntil(t *team, a agent.Agent, s idle.Strategy, c *checker, n int) error {
	for c.received < n {
		k, err := a.DoWork()
		if err != nil {
			return err
		}
		if k == 0 && t.abort.Load() {
			return errAborted
		}
		s.Idle(k)
	}
	return nil
}
