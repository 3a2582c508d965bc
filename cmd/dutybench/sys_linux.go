package main

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// pinTo sets the calling thread's affinity to one CPU. The caller must have
// locked its goroutine to the thread.
func pinTo(cpu int) error {
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("dutybench: sched_setaffinity(cpu %d): %w", cpu, err)
	}
	return nil
}

// firstCPUs returns the first n CPUs this process may run on, or fewer if it
// has fewer.
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

// socketpairCloexec is socketpair(2) of two connected stream sockets, both
// close-on-exec from the start.
func socketpairCloexec() ([2]int, error) {
	return unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
}

// benchTimerSlack is the timer slack lowTimerSlack sets.
const benchTimerSlack = time.Microsecond

// lowTimerSlack sets the calling thread's timer slack to benchTimerSlack,
// so that its sleeps end close to when they are due (the kernel's default
// slack is far larger: see runner.WithTimerSlack).
// The caller has locked its goroutine to the thread.
func lowTimerSlack() {
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(benchTimerSlack.Nanoseconds()), 0, 0, 0)
}

// sleepFor sleeps the calling thread with nanosleep(2): a runtime timer
// (time.Sleep) wakes a goroutine up to a millisecond late on an idle
// process.
func sleepFor(d time.Duration) {
	ts := unix.NsecToTimespec(int64(d))
	_ = unix.Nanosleep(&ts, nil)
}
