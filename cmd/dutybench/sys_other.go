//go:build !linux

package main

import (
	"errors"
	"fmt"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// pinTo fails: thread affinity is Linux's (sched_setaffinity). It is never
// reached, since firstCPUs finds no CPUs to pin to.
func pinTo(cpu int) error {
	return fmt.Errorf("dutybench: pinning a thread to cpu %d: %w", cpu, errors.ErrUnsupported)
}

// firstCPUs returns nil: without affinity, runs are locked but not pinned.
func firstCPUs(int) []int { return nil }

// socketpairCloexec is socketpair(2) of two connected stream sockets, made
// close-on-exec under syscall.ForkLock (no SOCK_CLOEXEC here), so that no
// process started meanwhile inherits them.
func socketpairCloexec() ([2]int, error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		return fds, err
	}
	unix.CloseOnExec(fds[0])
	unix.CloseOnExec(fds[1])
	return fds, nil
}

// lowTimerSlack does nothing where there is no per-thread timer slack.
func lowTimerSlack() {}

// sleepFor sleeps with the runtime's timer.
func sleepFor(d time.Duration) { time.Sleep(d) }
