package main

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dutyrt/duty/idle"
)

// placement says where a workload's goroutines run: with lock, each locks
// itself to an OS thread and never unlocks, so the thread (and its
// affinity) ends with the goroutine; with cpus, slot i is also pinned to
// cpus[i % len(cpus)].
type placement struct {
	lock bool
	cpus []int
}

func (p placement) enter(slot int) error {
	if !p.lock {
		return nil
	}
	runtime.LockOSThread()
	if len(p.cpus) == 0 {
		return nil
	}
	return pinTo(p.cpus[slot%len(p.cpus)])
}

// cpu returns the CPU of slot, or -1 when not pinned.
func (p placement) cpu(slot int) int {
	if !p.lock || len(p.cpus) == 0 {
		return -1
	}
	return p.cpus[slot%len(p.cpus)]
}

func (p placement) String() string {
	switch {
	case !p.lock:
		return "goroutines (not locked)"
	case len(p.cpus) == 0:
		return "locked threads, not pinned"
	default:
		return fmt.Sprintf("locked threads pinned to CPUs %v", p.cpus)
	}
}

var (
	errTimeout = errors.New("dutybench: repetition timed out")
	errAborted = errors.New("dutybench: aborted")
)

// team runs the goroutines of one repetition behind a start barrier.
type team struct {
	place   placement
	release chan struct{}
	ready   sync.WaitGroup
	done    sync.WaitGroup
	abort   atomic.Bool // set on a failure or timeout; spinning loops check it when refused or idle
	mu      sync.Mutex
	errs    []error
	closers []io.Closer // closed on the first failure: what a blocked member waits on
	end     time.Time   // written by the goroutine that calls finish
}

func newTeam(place placement, closers ...io.Closer) *team {
	return &team{place: place, release: make(chan struct{}), closers: closers}
}

// spawn starts fn in slot (its CPU under pinning) behind the barrier.
func (t *team) spawn(slot int, fn func() error) {
	t.ready.Add(1)
	t.done.Add(1)
	go func() {
		defer t.done.Done()
		err := t.place.enter(slot)
		t.ready.Done()
		<-t.release
		if err == nil {
			err = fn()
		}
		if err != nil {
			t.fail(err)
		}
	}()
}

// finish records the end of the timed span, after the last message.
func (t *team) finish() { t.end = time.Now() }

// fail records err, aborts the team and, the first time, closes the
// team's closers so that a member blocked on them returns at once.
func (t *team) fail(err error) {
	t.mu.Lock()
	t.errs = append(t.errs, err)
	closers := t.closers
	t.closers = nil
	t.mu.Unlock()
	t.abort.Store(true)
	for _, c := range closers {
		_ = c.Close()
	}
}

// run waits for every goroutine of the team to be ready, gives their
// threads a moment to settle (pinned, at the barrier), then releases them
// and returns the time from the release to finish.
func (t *team) run(timeout time.Duration) (time.Duration, error) {
	t.ready.Wait()
	time.Sleep(20 * time.Millisecond)
	start := time.Now()
	close(t.release)
	finished := make(chan struct{})
	go func() { t.done.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(timeout):
		t.abort.Store(true)
		select {
		case <-finished:
		case <-time.After(2 * time.Second):
		}
		t.mu.Lock()
		defer t.mu.Unlock()
		return 0, errors.Join(fmt.Errorf("%w after %v", errTimeout, timeout), errors.Join(t.errs...))
	}
	if err := errors.Join(t.errs...); err != nil {
		return 0, err
	}
	if t.end.IsZero() {
		return 0, errors.New("dutybench: the consumer did not record its end time")
	}
	return t.end.Sub(start), nil
}

// refused decides what a spinning sender does with err, one attempt's
// result: nil to try again (err is refused; wait, if not nil, runs first),
// errAborted once the team has aborted, or err itself.
func (t *team) refused(err, refused error, wait func()) error {
	if err != refused {
		return err
	}
	if t.abort.Load() {
		return errAborted
	}
	if wait != nil {
		wait()
	}
	return nil
}

// retry calls try until it is accepted, spinning.
func (t *team) retry(refused error, try func() error) error {
	for err := try(); err != nil; err = try() {
		if err := t.refused(err, refused, nil); err != nil {
			return err
		}
	}
	return nil
}

// writer is what produce sends through: a ring, or an adapter of one
// inlined call (mailboxWriter, ...). An interface, not a func value: the
// call goes to the ring's method with no wrapper frame.
type writer interface {
	Write(typeID int32, payload []byte) error
}

// produce sends n messages as producer id with w, spinning while w
// refuses one (wait, if not nil, between attempts).
func produce(t *team, w writer, n int, id uint64, corruptAt int, refused error, wait func()) error {
	var p [payloadLen]byte
	putPayload(p[:], 0, id)
	for i := range n {
		putSeq(&p, seqFor(i, corruptAt))
		for err := w.Write(msgTypeID, p[:]); err != nil; err = w.Write(msgTypeID, p[:]) {
			if err := t.refused(err, refused, wait); err != nil {
				return err
			}
		}
	}
	return nil
}

// produceOne sends p with w, spinning while w refuses it.
func produceOne(t *team, w writer, p []byte, refused error, wait func()) error {
	for err := w.Write(msgTypeID, p); err != nil; err = w.Write(msgTypeID, p) {
		if err := t.refused(err, refused, wait); err != nil {
			return err
		}
	}
	return nil
}

// poller is what a consumer polls: an agent, or one read of a ring or
// mailbox into a checker.
type poller interface{ DoWork() (int, error) }

type pollFunc func() (int, error)

func (f pollFunc) DoWork() (int, error) { return f() }

// pollUntil polls p, which hands what it takes to c, until c has seen n
// messages, passing each poll's count to s if not nil, else spinning. p is
// an interface, not a function value: on a round trip's critical path
// that indirection shows.
func pollUntil(t *team, c *checker, n int, s idle.Strategy, p poller) error {
	for c.received < n {
		k, err := p.DoWork()
		if err != nil {
			return err
		}
		if k == 0 && t.abort.Load() {
			return errAborted
		}
		if s != nil {
			s.Idle(k)
		}
	}
	return nil
}

// stream runs a throughput repetition: each producer in its slot (0, 1,
// ...), consume in the next; consume's return ends the timed span, and c
// (nil when consume checks for itself) must have seen every producer's
// share in order.
func stream(cfg *runConfig, t *team, c *checker, consume func() error, producers ...func() error) (time.Duration, error) {
	for slot, p := range producers {
		t.spawn(slot, p)
	}
	t.spawn(len(producers), func() error {
		if err := consume(); err != nil {
			return err
		}
		t.finish()
		if c == nil {
			return nil
		}
		return c.finish(split(cfg.n, len(producers)))
	})
	return t.run(cfg.timeout)
}

// split returns how many messages each of k producers sends: n in all.
func split(n, k int) []int {
	out := make([]int, k)
	for i := range out {
		out[i] = n / k
	}
	out[0] += n % k
	return out
}

// clock reads the monotonic clock as ns since an epoch: one runtime
// nanotime call.
type clock struct{ epoch time.Time }

func newClock() clock      { return clock{epoch: time.Now()} }
func (c clock) now() int64 { return int64(time.Since(c.epoch)) }

// pingLoop is the pinger of every round-trip workload: roundTrip sends
// message i and returns once its echo is checked; lat[i] is the time since
// the previous round trip ended.
func pingLoop(n, corruptAt int, lat []int64, roundTrip func(p []byte) error) error {
	var p [payloadLen]byte
	putPayload(p[:], 0, 0)
	clk := newClock()
	last := clk.now()
	for i := range n {
		putSeq(&p, seqFor(i, corruptAt))
		if err := roundTrip(p[:]); err != nil {
			return err
		}
		now := clk.now()
		lat[i] = now - last
		last = now
	}
	return nil
}

// roundTrips runs a round-trip repetition: the pinger (pingLoop, the echoes
// checked with pc) in slot 0, echo (n pings checked with c) in slot 1.
func roundTrips(cfg *runConfig, t *team, pc, c *checker, roundTrip func(p []byte) error, echo func() error) (time.Duration, error) {
	n := cfg.n
	t.spawn(0, func() error {
		if err := pingLoop(n, cfg.corruptAt, cfg.lat[:n], roundTrip); err != nil {
			return err
		}
		t.finish()
		return pc.finish([]int{n})
	})
	t.spawn(1, func() error {
		if err := echo(); err != nil {
			return err
		}
		return c.finish([]int{n})
	})
	return t.run(cfg.timeout)
}

// using opens a resource, runs fn with it and releases it.
func using[T any](open func() (T, func(), error), fn func(T) (time.Duration, error)) (time.Duration, error) {
	v, release, err := open()
	if err != nil {
		return 0, err
	}
	defer release()
	return fn(v)
}

// role is the benchmark's agents' agent.Agent but for DoWork.
type role string

func (r role) RoleName() string { return string(r) }
func (role) OnStart() error     { return nil }
func (role) OnClose() error     { return nil }
