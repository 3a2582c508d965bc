package main

import (
	"time"

	"golang.org/x/sys/unix"
)

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
