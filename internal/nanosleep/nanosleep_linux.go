//go:build linux

package nanosleep

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Sleep sleeps the calling OS thread for d plus the thread's timer slack,
// keeping its P; a signal may end it earlier (EINTR: a shorter pause is
// harmless to every caller). d <= 0 returns at once.
func Sleep(d time.Duration) {
	if d <= 0 {
		return
	}
	ts := unix.NsecToTimespec(int64(d))
	unix.RawSyscall(unix.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&ts)), 0, 0)
}
