package main

// WA and WAL (docs/workloads.md): typed messages through actors, each a
// mailbox.Actor draining into a message.Router on a runner with the idle
// strategy the variant names; protoactor-go is the baseline
// (actors_protoactor.go).

import (
	"cmp"
	"fmt"
	"sync"
	"time"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/idle"
	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/runner"
)

// actorIdle makes the idle strategy of an actor draining mb.
type actorIdle func(mb *mailbox.Mailbox) (idle.Strategy, error)

// actorIdles are duty's variants of WA and WAL.
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

// actorVariants are WA's or (latency) WAL's variants, protoactor-go's
// first where built.
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
// last message.
type lastMessage struct {
	c    *checker
	n    int
	done chan struct{}
	end  time.Time // written before done is closed, read after
}

func newLastMessage(n int) *lastMessage {
	return &lastMessage{c: newChecker(1), n: n, done: make(chan struct{})}
}

// take checks m and, at the last one, records the time and closes done.
func (l *lastMessage) take(m *benchMsg) {
	l.c.checkMsg(m)
	if l.c.received == l.n {
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
// time), the team failed, or the actor's runner rn (nil: protoactor)
// stopped.
func (l *lastMessage) await(abort *abortSignal, rn *runner.Runner) (time.Time, error) {
	var stopped <-chan struct{}
	if rn != nil {
		stopped = rn.Done()
	}
	select {
	case <-l.done:
		return l.end, nil
	case <-abort.ch:
		return time.Time{}, errAborted
	case <-stopped:
		return time.Time{}, fmt.Errorf("dutybench: the receiving actor stopped: %w", cmp.Or(rn.Err(), errAborted))
	}
}

// startRunner starts a runner for a, pinned to slot's CPU if any.
func startRunner(a agent.Agent, place placement, slot int, opts ...runner.Option) (*runner.Runner, error) {
	if cpu := place.cpu(slot); cpu >= 0 {
		opts = append(opts, runner.WithCPUs(cpu))
	}
	r, err := runner.New(a, opts...)
	if err == nil {
		err = r.Start()
	}
	return r, err
}

// startActor starts typedActor(mb, handle) on a runner in slot 1.
func startActor(role string, mb *mailbox.Mailbox, handle func(*benchMsg) error, newIdle actorIdle, place placement) (*runner.Runner, error) {
	a, err := typedActor(role, mb, handle)
	if err != nil {
		return nil, err
	}
	s, err := newIdle(mb)
	if err != nil {
		return nil, err
	}
	return startRunner(a, place, 1, runner.WithIdle(s))
}

// actorStream is WA's duty variant.
//
//go:noinline // a variant factory: see runFunc
func actorStream(newIdle actorIdle) runFunc {
	return func(cfg *runConfig) (time.Duration, error) {
		mb, err := newBenchMailbox("wa")
		if err != nil {
			return 0, err
		}
		last := newLastMessage(cfg.n)
		rn, err := startActor("wa-consumer", mb, func(m *benchMsg) error { last.take(m); return nil }, newIdle, cfg.place)
		if err != nil {
			return 0, err
		}
		defer rn.Close()
		return actorStreamRun(cfg, func(t *team) error { return produceTyped(t, mb, cfg.n, cfg.corruptAt) }, last, rn)
	}
}

// actorStreamRun runs a repetition of WA: the producer in slot 0 runs
// send (cfg.n typed messages, each filled in place), slot 1 waits for the
// actor's last message, whose time ends the span.
func actorStreamRun(cfg *runConfig, send func(t *team) error, last *lastMessage, rn *runner.Runner) (time.Duration, error) {
	abort := newAbortSignal()
	t := newTeam(cfg.place, abort)
	t.spawn(0, func() error { return send(t) })
	t.spawn(1, func() error {
		end, err := last.await(abort, rn)
		if err != nil {
			return err
		}
		t.end = end
		return last.c.finish([]int{cfg.n})
	})
	return t.run(cfg.timeout)
}

// actorPingPong is WAL's duty variant: the ponger on a runner (slot 1);
// the pinger driven by the timing goroutine (slot 0) as its runner would
// drive it, DoWork then the idle strategy until the pong is in.
//
//go:noinline // a variant factory: see runFunc
func actorPingPong(newIdle actorIdle) runFunc {
	return func(cfg *runConfig) (time.Duration, error) {
		pings, pongs, err := newMailboxPair()
		if err != nil {
			return 0, err
		}
		pc, last := newChecker(1), newLastMessage(cfg.n)
		pinger, err := typedActor("wal-pinger", pongs, func(m *benchMsg) error { pc.checkMsg(m); return nil })
		if err != nil {
			return 0, err
		}
		pinging, err := newIdle(pongs)
		if err != nil {
			return 0, err
		}
		rn, err := startActor("wal-ponger", pings, func(m *benchMsg) error {
			// The pong first: back-pressured, the ping waits for the next
			// drain with nothing done (message.Handle).
			if err := benchMsgs.Send(pongs, m); err != nil {
				return err
			}
			last.take(m)
			return nil
		}, newIdle, cfg.place)
		if err != nil {
			return 0, err
		}
		defer rn.Close()
		abort := newAbortSignal()
		t := newTeam(cfg.place, abort)
		w := &typedWriter{mb: pings, m: new(benchMsg)} // a pointer: no allocation to make it a writer per round trip
		return roundTrips(cfg, t, pc, last.c, func(p []byte) error {
			if err := produceOne(t, w, p, mailbox.ErrBackPressured, nil); err != nil {
				return err
			}
			return pollUntil(t, pc, pc.received+1, pinging, pinger)
		}, func() error {
			_, err := last.await(abort, rn)
			return err
		})
	}
}
