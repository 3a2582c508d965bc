//go:build !linux

package futex

import (
	"sync/atomic"
	"time"
)

// pollSleep is the longest a wait sleeps where there is no futex: a
// waiter sees a change of its word at the latest this late.
const pollSleep = 50 * time.Microsecond

// Wait sleeps for at most d, or pollSleep if that is shorter, unless *addr
// no longer holds val.
func Wait(addr *atomic.Uint32, val uint32, d time.Duration) {
	if d > 0 && addr.Load() == val {
		time.Sleep(min(d, pollSleep))
	}
}

// Wake does nothing: waiters poll.
func Wake(*atomic.Uint32, int) {}

// WaitAny sleeps for at most d, or pollSleep if that is shorter, unless a
// word no longer holds its value.
func WaitAny(addrs []*atomic.Uint32, vals []uint32, d time.Duration) {
	for i, a := range addrs {
		if a.Load() != vals[i] {
			return
		}
	}
	if d > 0 && len(addrs) == 0 {
		time.Sleep(d)
	} else if d > 0 {
		time.Sleep(min(d, pollSleep))
	}
}
