//go:build !linux

package main

import (
	"errors"
	"fmt"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// pinTo fails: never reached, since firstCPUs finds no CPUs to pin to.
func pinTo(cpu int) error {
	return fmt.Errorf("dutybench: pinning a thread to cpu %d: %w", cpu, errors.ErrUnsupported)
}

func firstCPUs(int) []int { return nil }

// socketpairCloexec makes the pair close-on-exec under syscall.ForkLock
// (no SOCK_CLOEXEC here), so that no process started meanwhile inherits it.
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

func lowTimerSlack() {}

func sleepFor(d time.Duration) { time.Sleep(d) }
