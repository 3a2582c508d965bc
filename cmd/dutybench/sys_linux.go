package main

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// pinTo sets the calling (locked) thread's affinity to one CPU.
func pinTo(cpu int) error {
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("dutybench: sched_setaffinity(cpu %d): %w", cpu, err)
	}
	return nil
}

// firstCPUs returns the first n CPUs this process may run on, or fewer.
func firstCPUs(n int) []int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil
	}
	var out []int
	for cpu := 0; cpu < len(set)*64 && len(out) < n; cpu++ {
		if set.IsSet(cpu) {
			out = append(out, cpu)
		}
	}
	return out
}

func socketpairCloexec() ([2]int, error) {
	return unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
}

// lowTimerSlack sets the calling (locked) thread's timer slack to the
// least this program asks of the kernel, so that its sleeps end close to
// when they are due (runner.WithTimerSlack).
func lowTimerSlack() { _ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1000, 0, 0, 0) }

// sleepFor sleeps the calling thread with nanosleep(2): time.Sleep's
// wake-up goes through the Go scheduler's timers, which on an otherwise
// idle process are checked late.
func sleepFor(d time.Duration) {
	ts := unix.NsecToTimespec(int64(d))
	_ = unix.Nanosleep(&ts, nil)
}
