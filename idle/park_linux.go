//go:build linux

package idle

import (
	"time"

	"golang.org/x/sys/unix"
)

// park sleeps the calling OS thread for d with a direct nanosleep(2).
//
// On a locked thread time.Sleep must hand the P away and be woken by
// another thread through the runtime timer, which costs far more than the
// kernel timer (docs/idle.md, "Parking on a locked thread", has the
// figures); nanosleep blocks only this thread (the runtime treats it as a
// syscall and may lend the P to other goroutines meanwhile). The actual
// sleep is d plus the thread's timer slack (50 µs by default on Linux;
// see runner.WithTimerSlack).
func park(d time.Duration) {
	if d <= 0 {
		return
	}
	ts := unix.NsecToTimespec(int64(d))
	_ = unix.Nanosleep(&ts, nil) // EINTR: a shorter park is harmless
}
