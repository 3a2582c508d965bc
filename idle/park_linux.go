//go:build linux

package idle

import (
	"time"

	"golang.org/x/sys/unix"
)

// parkGivesP is the shortest park that goes through time.Sleep rather than
// nanosleep(2): see park.
const parkGivesP = time.Millisecond

// sleepFn is time.Sleep; tests replace it to see which way park went.
var sleepFn = time.Sleep

// park sleeps the calling OS thread for d.
//
// Below parkGivesP it makes a direct nanosleep(2). On a locked thread
// time.Sleep must hand the P away and be woken by another thread through
// the runtime timer, which costs far more than the kernel timer at short
// periods (docs/idle.md, "Parking on a locked thread", has the figures);
// nanosleep blocks only this thread. The actual sleep is d plus the
// thread's timer slack (runner.WithTimerSlack sets it).
//
// From parkGivesP up it calls time.Sleep. The runtime treats a nanosleep
// as a syscall and takes the thread's P back only when its monitor next
// looks, which on an idle process can be milliseconds later: runners
// parked that long would keep other goroutines (a network client's, say)
// from running when GOMAXPROCS is small. time.Sleep hands the P over at
// once, and at these periods its wake-up costs a small fraction of the
// park.
func park(d time.Duration) {
	switch {
	case d <= 0:
	case d >= parkGivesP:
		sleepFn(d)
	default:
		ts := unix.NsecToTimespec(int64(d))
		_ = unix.Nanosleep(&ts, nil) // EINTR: a shorter park is harmless
	}
}
