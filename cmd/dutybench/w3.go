package main

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/idle"
	"github.com/dutyrt/duty/ringbuf"
	"github.com/dutyrt/duty/runner"
)

// W3: round trip over two one-to-one channels (ping A->B, pong B->A),
// latency per round trip measured by the pinger (docs/workloads.md, "W3:
// round trip"). The pinger runs in slot 0, the ponger in slot 1. The
// -warmup repetitions are the workload's warm-up: 3 of n round trips by
// default, so 3n round trips.
var w3 = &workload{
	name:        "w3",
	kind:        kindLatency,
	defaultN:    1_000_000,
	defaultReps: 7,
	variants: []variant{
		{name: "chan", run: w3Chan, goroutines: true},
		{name: "onetoone", run: func(cfg *runConfig) (time.Duration, error) { return w3OneToOne(cfg, true) }},
		{name: "onetoone-runner", run: func(cfg *runConfig) (time.Duration, error) { return w3Runner(cfg, true, idle.BusySpin) }},
		{name: "chan-locked", run: w3Chan, extra: true},
		{name: "onetoone-runner-notiming", run: func(cfg *runConfig) (time.Duration, error) { return w3Runner(cfg, false, idle.BusySpin) }, extra: true},
		{name: "onetoone-runner-noop", run: func(cfg *runConfig) (time.Duration, error) { return w3Runner(cfg, true, idle.NoOp) }, extra: true},
		{name: "onetoone-readpoll", run: func(cfg *runConfig) (time.Duration, error) { return w3OneToOne(cfg, false) }, extra: true},
	},
}

// clock reads the monotonic clock as ns since an epoch: time.Since on a
// time with a monotonic reading is one runtime nanotime call.
type clock struct{ epoch time.Time }

func newClock() clock      { return clock{epoch: time.Now()} }
func (c clock) now() int64 { return int64(time.Since(c.epoch)) }

func w3Chan(cfg *runConfig) (time.Duration, error) {
	ping := make(chan [payloadLen]byte)
	pong := make(chan [payloadLen]byte)
	t := newTeam(cfg.place)
	n, corruptAt, lat := cfg.n, cfg.corruptAt, cfg.lat[:cfg.n]
	pc, c := newChecker(1), newChecker(1)
	t.spawn(0, func() error {
		var p [payloadLen]byte
		putPayload(p[:], 0, 0)
		clk := newClock()
		last := clk.now()
		for i := range n {
			putSeq(&p, seqFor(i, corruptAt))
			ping <- p
			q := <-pong
			pc.checkArray(&q)
			now := clk.now()
			lat[i] = now - last
			last = now
		}
		t.finish()
		return pc.finish([]int{n})
	})
	t.spawn(1, func() error {
		for range n {
			q := <-ping
			c.checkArray(&q)
			pong <- q
		}
		return c.finish([]int{n})
	})
	return t.run(cfg.timeout)
}

// awaitReady spins until r has a record at head (false: the team aborted).
// It polls with Ready, which inlines, as ringbuf's documentation says a
// spinning consumer should: a loop that calls Read on every poll (not
// inlinable) delivers each message later (docs/ringbuf.md, "Spinning
// consumers").
func awaitReady(t *team, r *ringbuf.OneToOne) bool {
	for !r.Ready() {
		if t.abort.Load() {
			return false
		}
	}
	return true
}

// echo returns a Handler that checks a ping and writes it back to out,
// spinning while out is full; a write error is kept in *errp.
func echo(c *checker, out *ringbuf.OneToOne, abort *atomic.Bool, errp *error) ringbuf.Handler {
	return func(typeID int32, payload []byte) {
		c.check(typeID, payload)
		for {
			err := out.Write(typeID, payload)
			if err == nil {
				return
			}
			if err != ringbuf.ErrFull || abort.Load() {
				if *errp == nil {
					*errp = err
				}
				return
			}
		}
	}
}

// newRingPair returns the ping and pong rings.
func newRingPair() (*ringbuf.OneToOne, *ringbuf.OneToOne, error) {
	a, _, err := newRings()
	if err != nil {
		return nil, nil, err
	}
	b, _, err := newRings()
	if err != nil {
		return nil, nil, err
	}
	return a, b, nil
}

// w3OneToOne runs onetoone: each side spins with awaitReady, then reads;
// without ready, the extra variant onetoone-readpoll, which spins by
// calling Read.
func w3OneToOne(cfg *runConfig, ready bool) (time.Duration, error) {
	pingR, pongR, err := newRingPair()
	if err != nil {
		return 0, err
	}
	t := newTeam(cfg.place)
	n, corruptAt, lat := cfg.n, cfg.corruptAt, cfg.lat[:cfg.n]
	pc, c := newChecker(1), newChecker(1)
	t.spawn(0, func() error {
		var p [payloadLen]byte
		putPayload(p[:], 0, 0)
		h := ringbuf.Handler(pc.check)
		clk := newClock()
		last := clk.now()
		for i := range n {
			putSeq(&p, seqFor(i, corruptAt))
			for {
				err := pingR.Write(msgTypeID, p[:])
				if err == nil {
					break
				}
				if err != ringbuf.ErrFull {
					return err
				}
				if t.abort.Load() {
					return errAborted
				}
			}
			for pc.received == i {
				if ready && !awaitReady(t, pongR) {
					return errAborted
				}
				k, err := pongR.Read(h, 1)
				if err != nil {
					return err
				}
				if k == 0 && t.abort.Load() {
					return errAborted
				}
			}
			now := clk.now()
			lat[i] = now - last
			last = now
		}
		t.finish()
		return pc.finish([]int{n})
	})
	t.spawn(1, func() error {
		var werr error
		h := echo(c, pongR, &t.abort, &werr)
		for c.received < n {
			if ready && !awaitReady(t, pingR) {
				return errAborted
			}
			k, err := pingR.Read(h, ringbuf.NoLimit)
			if err != nil {
				return err
			}
			if werr != nil {
				return werr
			}
			if k == 0 && t.abort.Load() {
				return errAborted
			}
		}
		return c.finish([]int{n})
	})
	return t.run(cfg.timeout)
}

// pingAgent is the pinger of onetoone-runner as an agent: each DoWork sends
// the next ping or polls for the pong, never blocking.
type pingAgent struct {
	out, in   *ringbuf.OneToOne
	released  *atomic.Bool // the start barrier
	abort     *atomic.Bool
	lat       []int64
	n, i      int
	corruptAt int
	started   bool
	clk       clock
	last      int64
	p         [payloadLen]byte
	c         *checker
	h         ringbuf.Handler
	end       time.Time
}

func (a *pingAgent) RoleName() string { return "w3-pinger" }
func (a *pingAgent) OnStart() error   { return nil }
func (a *pingAgent) OnClose() error   { return nil }

func (a *pingAgent) DoWork() (int, error) {
	if !a.started {
		if !a.released.Load() {
			return 0, a.aborted()
		}
		a.started = true
		a.last = a.clk.now()
		return 1, a.send()
	}
	if !a.in.Ready() { // in line: an idle cycle makes no call into the ring
		return 0, a.aborted()
	}
	k, err := a.in.Read(a.h, 1)
	if err != nil {
		return 0, agent.Terminate(err)
	}
	if k == 0 {
		return 0, a.aborted()
	}
	now := a.clk.now()
	a.lat[a.i] = now - a.last
	a.last = now
	a.i++
	if a.i == a.n {
		a.end = time.Now()
		return 1, agent.ErrDone
	}
	return 1, a.send()
}

func (a *pingAgent) aborted() error {
	if a.abort.Load() {
		return agent.Terminate(errAborted)
	}
	return nil
}

func (a *pingAgent) send() error {
	putSeq(&a.p, seqFor(a.i, a.corruptAt))
	for {
		err := a.out.Write(msgTypeID, a.p[:])
		if err == nil {
			return nil
		}
		if err != ringbuf.ErrFull {
			return agent.Terminate(err)
		}
		if a.abort.Load() {
			return agent.Terminate(errAborted)
		}
	}
}

// pongAgent echoes every ping it reads.
type pongAgent struct {
	in   *ringbuf.OneToOne
	h    ringbuf.Handler
	werr error
}

func (a *pongAgent) RoleName() string { return "w3-ponger" }
func (a *pongAgent) OnStart() error   { return nil }
func (a *pongAgent) OnClose() error   { return nil }

func (a *pongAgent) DoWork() (int, error) {
	if !a.in.Ready() {
		return 0, nil
	}
	k, err := a.in.Read(a.h, ringbuf.NoLimit)
	if err != nil {
		return 0, agent.Terminate(err)
	}
	if a.werr != nil {
		return k, agent.Terminate(a.werr)
	}
	return k, nil
}

// errorSink collects what the runners report.
type errorSink struct {
	mu   sync.Mutex
	errs []error
}

func (s *errorSink) handle(err error) {
	s.mu.Lock()
	s.errs = append(s.errs, err)
	s.mu.Unlock()
}

func (s *errorSink) err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return errors.Join(s.errs...)
}

// w3Runner runs onetoone-runner: with cycleTiming the runners keep their
// default stall tracker (one clock read per duty cycle); without it, the
// extra variant onetoone-runner-notiming. strategy is the runners' idle
// strategy: busy spin (a PAUSE per idle cycle), or no-op for the extra
// variant onetoone-runner-noop.
func w3Runner(cfg *runConfig, cycleTiming bool, strategy func() idle.Strategy) (time.Duration, error) {
	pingR, pongR, err := newRingPair()
	if err != nil {
		return 0, err
	}
	var released, abort atomic.Bool
	pc, c := newChecker(1), newChecker(1)
	pinger := &pingAgent{out: pingR, in: pongR, released: &released, abort: &abort,
		lat: cfg.lat[:cfg.n], n: cfg.n, corruptAt: cfg.corruptAt, clk: newClock(), c: pc, h: pc.check}
	putPayload(pinger.p[:], 0, 0)
	ponger := &pongAgent{in: pingR}
	ponger.h = echo(c, pongR, &abort, &ponger.werr)

	sink := &errorSink{}
	opts := func(slot int) []runner.Option {
		o := []runner.Option{runner.WithIdle(strategy()), runner.WithErrorHandler(sink.handle),
			runner.WithErrorPolicy(runner.Stop), runner.WithCycleTiming(cycleTiming)}
		if cpu := cfg.place.cpu(slot); cpu >= 0 {
			o = append(o, runner.WithCPUs(cpu))
		}
		return o
	}
	pr, err := runner.New(pinger, opts(0)...)
	if err != nil {
		return 0, err
	}
	po, err := runner.New(ponger, opts(1)...)
	if err != nil {
		return 0, err
	}
	if err := po.Start(); err != nil {
		return 0, err
	}
	if err := pr.Start(); err != nil {
		return 0, errors.Join(err, po.Close())
	}
	time.Sleep(20 * time.Millisecond)
	start := time.Now()
	released.Store(true)
	var runErr error
	select {
	case <-pr.Done():
	case <-po.Done():
		abort.Store(true)
		<-pr.Done() // the pinger sees abort on its next idle cycle
	case <-time.After(cfg.timeout):
		abort.Store(true)
		runErr = fmt.Errorf("%w after %v", errTimeout, cfg.timeout)
	}
	closeErr := errors.Join(pr.Close(), po.Close())
	if err := errors.Join(runErr, closeErr, pr.Err(), po.Err(), sink.err()); err != nil {
		return 0, err
	}
	if err := errors.Join(pc.finish([]int{cfg.n}), c.finish([]int{cfg.n})); err != nil {
		return 0, err
	}
	return pinger.end.Sub(start), nil
}
