//go:build linux

package idle

import (
	"time"

	"golang.org/x/sys/unix"

	"github.com/dutyrt/duty/internal/nanosleep"
)

const (
	// parkKeepsP is the shortest park the runtime is told of: shorter
	// parks keep the thread's P (see park).
	parkKeepsP = 64 * time.Microsecond
	// parkGivesP is the shortest park that goes through time.Sleep rather
	// than nanosleep(2): see park.
	parkGivesP = time.Millisecond
)

// sleepFn is time.Sleep; tests replace it to see which way park went.
var sleepFn = time.Sleep

// parkWay is how park sleeps for a period.
type parkWay int

const (
	parkNot       parkWay = iota // d <= 0
	parkKeepingP                 // a raw nanosleep(2): the runtime does not know
	parkInSyscall                // nanosleep(2) as a system call: the P can be taken
	parkGivingP                  // time.Sleep: the P is handed over at once
)

func wayOf(d time.Duration) parkWay {
	switch {
	case d <= 0:
		return parkNot
	case d < parkKeepsP:
		return parkKeepingP
	case d < parkGivesP:
		return parkInSyscall
	}
	return parkGivingP
}

// park sleeps the calling OS thread for d; the actual sleep is d plus the
// thread's timer slack (runner.WithTimerSlack sets it).
//
// Below parkGivesP it makes a direct nanosleep(2). On a locked thread
// time.Sleep must hand the P away and be woken by another thread through
// the runtime timer, which costs far more than the kernel timer at short
// periods (docs/idle.md, "Parking on a locked thread"); nanosleep blocks
// only this thread.
//
// Below parkKeepsP the nanosleep is raw: the runtime is not told, and the
// thread keeps its P for the park, as a spinning agent keeps it. Told of
// a system call, the runtime's monitor takes the P back from a thread
// whose call outlived one of its ticks (tens of µs), which every park
// does once the timer slack is added: it then starts another thread to
// look for work, and keeps waking itself at its shortest interval. With
// as many busy threads as CPUs, those wake-ups preempt the agents, and the
// parked agent finds its P gone when it wakes. A stop-the-world or a
// preemption request is never held up for longer than the park: its
// signal ends the nanosleep early (EINTR), and the agent stops at its
// next function call.
//
// From parkGivesP up it calls time.Sleep. The runtime takes a nanosleep's
// P back only when its monitor next looks, which on an idle process can be
// milliseconds later: runners parked that long would keep other
// goroutines (a network client's, say) from running when GOMAXPROCS is
// small. time.Sleep hands the P over at once, and at these periods its
// wake-up costs a small fraction of the park.
func park(d time.Duration) {
	switch wayOf(d) {
	case parkKeepingP:
		nanosleep.Sleep(d)
	case parkInSyscall:
		ts := unix.NsecToTimespec(int64(d))
		_ = unix.Nanosleep(&ts, nil) // EINTR: a shorter park is harmless
	case parkGivingP:
		sleepFn(d)
	}
}
