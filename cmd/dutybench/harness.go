package main

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// placement says where a workload's goroutines run. With lock, each
// goroutine locks itself to an OS thread for the whole repetition and never
// unlocks, so the thread (and any affinity set on it) ends with the
// goroutine. With cpus, the goroutine in slot i is also pinned to
// cpus[i % len(cpus)].
type placement struct {
	lock bool
	cpus []int
}

// enter applies the placement to the calling goroutine for slot.
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

// team runs the goroutines of one repetition: each applies the placement,
// reports ready, and waits on the start barrier; run sleeps 20 ms, reads the
// monotonic clock, releases the barrier, and waits for all of them.
type team struct {
	place   placement
	release chan struct{}
	ready   sync.WaitGroup
	done    sync.WaitGroup
	abort   atomic.Bool // set by run on a timeout; spinning loops check it when idle
	mu      sync.Mutex
	errs    []error
	end     time.Time // written by the goroutine that calls finish
}

func newTeam(place placement) *team {
	return &team{place: place, release: make(chan struct{})}
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

// finish records the end of the timed span; the consumer calls it after
// its last message.
func (t *team) finish() { t.end = time.Now() }

func (t *team) fail(err error) {
	t.mu.Lock()
	t.errs = append(t.errs, err)
	t.mu.Unlock()
	t.abort.Store(true)
}

// run releases the team and returns the time from the release to finish.
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
		if err := errors.Join(t.errs...); err != nil {
			return 0, fmt.Errorf("%w after %v: %w", errTimeout, timeout, err)
		}
		return 0, fmt.Errorf("%w after %v", errTimeout, timeout)
	}
	if err := errors.Join(t.errs...); err != nil {
		return 0, err
	}
	if t.end.IsZero() {
		return 0, errors.New("dutybench: the consumer did not record its end time")
	}
	return t.end.Sub(start), nil
}
