package main

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/idle"
	"github.com/dutyrt/duty/internal/atomicbuf"
	"github.com/dutyrt/duty/ringbuf"
	"github.com/dutyrt/duty/runner"
)

// W3 (docs/workloads.md): round trips, the pinger in slot 0, the ponger
// in slot 1.

func chanPingPong(cfg *runConfig) (time.Duration, error) {
	ping := make(chan [payloadLen]byte)
	pong := make(chan [payloadLen]byte)
	pc, c := newChecker(1), newChecker(1)
	return roundTrips(cfg, newTeam(cfg.place), pc, c, func(p []byte) error {
		ping <- [payloadLen]byte(p)
		q := <-pong
		pc.checkArray(&q)
		return nil
	}, func() error {
		for range cfg.n {
			q := <-ping
			c.checkArray(&q)
			pong <- q
		}
		return nil
	})
}

// awaitReady spins on Ready, which inlines (docs/ringbuf.md, "Spinning
// consumers"), until r has a record; false once the team aborted.
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
//
//go:noinline // makes a variant's closures: see runFunc
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

// ringPair returns the ping and pong rings.
func ringPair() (ping, pong *ringbuf.OneToOne, err error) {
	if ping, err = newOneToOne(); err != nil {
		return nil, nil, err
	}
	pong, err = newOneToOne()
	return ping, pong, err
}

// oneToOnePingPong is onetoone (each side spins with awaitReady, then
// reads) and, without ready, onetoone-readpoll (spins by calling Read).
// Both sides call the rings directly: on the round trip's critical path a
// function value's call shows.
//
//go:noinline // a variant factory: see runFunc
func oneToOnePingPong(ready bool) runFunc {
	return func(cfg *runConfig) (time.Duration, error) {
		pingR, pongR, err := ringPair()
		if err != nil {
			return 0, err
		}
		t := newTeam(cfg.place)
		pc, c := newChecker(1), newChecker(1)
		h := ringbuf.Handler(pc.check)
		return roundTrips(cfg, t, pc, c, func(p []byte) error {
			for err := pingR.Write(msgTypeID, p); err != nil; err = pingR.Write(msgTypeID, p) {
				if err := t.refused(err, ringbuf.ErrFull, nil); err != nil {
					return err
				}
			}
			for i := pc.received; pc.received == i; {
				if err := readOnce(t, pongR, ready, h, 1); err != nil {
					return err
				}
			}
			return nil
		}, func() error {
			var werr error
			e := echo(c, pongR, &t.abort, &werr)
			for c.received < cfg.n && werr == nil {
				if err := readOnce(t, pingR, ready, e, ringbuf.NoLimit); err != nil {
					return err
				}
			}
			return werr
		})
	}
}

// readOnce reads r once into h, after awaitReady when ready.
func readOnce(t *team, r *ringbuf.OneToOne, ready bool, h ringbuf.Handler, limit int) error {
	if ready && !awaitReady(t, r) {
		return errAborted
	}
	k, err := r.Read(h, limit)
	if err == nil && k == 0 && t.abort.Load() {
		return errAborted
	}
	return err
}

// pingAgent is onetoone-runner's pinger: each DoWork sends the next ping
// or polls for the pong, never blocking.
type pingAgent struct {
	role
	out, in         *ringbuf.OneToOne
	released, abort *atomic.Bool // released: the start barrier
	lat             []int64
	n, i, corruptAt int
	started         bool
	clk             clock
	last            int64
	p               [payloadLen]byte
	h               ringbuf.Handler
	end             time.Time
}

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
		if err != ringbuf.ErrFull || a.abort.Load() {
			return agent.Terminate(err)
		}
	}
}

// pongAgent echoes every ping it reads.
type pongAgent struct {
	role
	in   *ringbuf.OneToOne
	h    ringbuf.Handler
	werr error
}

func (a *pongAgent) DoWork() (int, error) {
	if !a.in.Ready() {
		return 0, nil
	}
	k, err := a.in.Read(a.h, ringbuf.NoLimit)
	if err = errors.Join(err, a.werr); err != nil {
		return k, agent.Terminate(err)
	}
	return k, nil
}

// runnerPingPong is onetoone-runner: each side an agent on a runner with
// strategy's idle strategy (onetoone-runner-noop: idle.NoOp) and, without
// cycleTiming, no stall tracker (onetoone-runner-notiming). The team
// collects what the runners report; it is never run.
//
//go:noinline // a variant factory: see runFunc
func runnerPingPong(cycleTiming bool, strategy func() idle.Strategy) runFunc {
	return func(cfg *runConfig) (time.Duration, error) {
		pingR, pongR, err := ringPair()
		if err != nil {
			return 0, err
		}
		var released atomic.Bool
		sink := newTeam(placement{})
		abort := &sink.abort
		pc, c := newChecker(1), newChecker(1)
		pinger := &pingAgent{role: "w3-pinger", out: pingR, in: pongR, released: &released, abort: abort,
			lat: cfg.lat[:cfg.n], n: cfg.n, corruptAt: cfg.corruptAt, clk: newClock(), h: pc.check}
		putPayload(pinger.p[:], 0, 0)
		ponger := &pongAgent{role: "w3-ponger", in: pingR}
		ponger.h = echo(c, pongR, abort, &ponger.werr)
		start := func(a agent.Agent, slot int) (*runner.Runner, error) {
			return startRunner(a, cfg.place, slot, runner.WithIdle(strategy()), runner.WithErrorHandler(sink.fail),
				runner.WithStopOnError(true), runner.WithCycleTiming(cycleTiming))
		}
		po, err := start(ponger, 1)
		if err != nil {
			return 0, err
		}
		pr, err := start(pinger, 0)
		if err != nil {
			return 0, errors.Join(err, po.Close())
		}
		time.Sleep(20 * time.Millisecond)
		t0 := time.Now()
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
		err = errors.Join(runErr, pr.Close(), po.Close(), pr.Err(), po.Err())
		sink.mu.Lock()
		err = errors.Join(append(sink.errs, err)...)
		sink.mu.Unlock()
		if err = errors.Join(err, pc.finish([]int{cfg.n}), c.finish([]int{cfg.n})); err != nil {
			return 0, err
		}
		return pinger.end.Sub(t0), nil
	}
}

// floorRing is the least a ring of 40-byte records can do in a ping-pong
// (one record in flight): the 8-byte header holds the message number + 1,
// no head, tail or wrap; the floor for duty's record layout in Go.
type floorRing struct{ b []byte }

const floorRecord = 40

func (r floorRing) header(at int) *atomic.Int64 {
	return (*atomic.Int64)(unsafe.Pointer(unsafe.SliceData(r.b[at : at+8])))
}

// send publishes message i; with zeroNext it first zeroes the next slot's
// header, as ringbuf.OneToOne does. The header's release store orders the
// payload before it (arm64 too: STLR); await's acquiring load pairs with it.
func (r floorRing) send(i int, p []byte, zeroNext bool) {
	slots := ringCapacity / floorRecord
	at := (i % slots) * floorRecord
	if zeroNext {
		atomicbuf.StoreRelease64(r.header(((i+1)%slots)*floorRecord), 0)
	}
	copy(r.b[at+8:at+floorRecord], p)
	atomicbuf.StoreRelease64(r.header(at), int64(i+1))
}

// await spins until message i is published and returns its payload.
func (r floorRing) await(t *team, i int) ([]byte, error) {
	at := (i % (ringCapacity / floorRecord)) * floorRecord
	for r.header(at).Load() != int64(i+1) {
		if t.abort.Load() {
			return nil, errAborted
		}
	}
	return r.b[at+8 : at+floorRecord], nil
}

// floorPingPong is the extra floor (and floor-zeronext).
//
//go:noinline // a variant factory: see runFunc
func floorPingPong(zeroNext bool) runFunc {
	return func(cfg *runConfig) (time.Duration, error) {
		b1, err := ringbuf.Allocate(ringCapacity)
		if err != nil {
			return 0, err
		}
		b2, err := ringbuf.Allocate(ringCapacity)
		if err != nil {
			return 0, err
		}
		ping, pong := floorRing{b1}, floorRing{b2}
		t := newTeam(cfg.place)
		pc, c := newChecker(1), newChecker(1)
		return roundTrips(cfg, t, pc, c, func(p []byte) error {
			i := pc.received
			ping.send(i, p, zeroNext)
			q, err := pong.await(t, i)
			pc.check(msgTypeID, q)
			return err
		}, func() error {
			for i := range cfg.n {
				q, err := ping.await(t, i)
				if err != nil {
					return err
				}
				c.check(msgTypeID, q)
				pong.send(i, q, zeroNext)
			}
			return nil
		})
	}
}
