package futex

import (
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

const (
	futexWait = 0 // FUTEX_WAIT, shared: the word may be in a mapping other processes share
	futexWake = 1 // FUTEX_WAKE, shared

	waitvSize32  = 2 // FUTEX2_SIZE_U32
	maxWaitv     = 128
	clockMonotic = 1 // CLOCK_MONOTONIC
)

// Wait sleeps while *addr holds val, for at most d (d <= 0: no sleep).
func Wait(addr *atomic.Uint32, val uint32, d time.Duration) {
	if d <= 0 {
		return
	}
	ts := unix.NsecToTimespec(int64(d))
	_, _, _ = unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), futexWait, uintptr(val),
		uintptr(unsafe.Pointer(&ts)), 0, 0)
}

// Wake wakes up to n waiters on addr.
func Wake(addr *atomic.Uint32, n int) {
	_, _, _ = unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), futexWake, uintptr(n), 0, 0, 0)
}

// waitvEntry is struct futex_waitv.
type waitvEntry struct {
	val      uint64
	uaddr    uint64
	flags    uint32
	reserved uint32
}

// waitvMissing is set once the kernel reports no futex_waitv (before
// Linux 5.16): WaitAny then sleeps on the first word only.
var waitvMissing atomic.Bool

// WaitAny sleeps while every addrs[i] holds vals[i], for at most d: until
// one of them changes or is woken (no words: for d). At most 128 words; more, or a kernel
// without futex_waitv, sleeps on the first word for at most d.
func WaitAny(addrs []*atomic.Uint32, vals []uint32, d time.Duration) {
	if d <= 0 {
		return
	}
	if len(addrs) == 0 {
		time.Sleep(d)
		return
	}
	if len(addrs) == 1 || len(addrs) > maxWaitv || waitvMissing.Load() {
		Wait(addrs[0], vals[0], d)
		return
	}
	if waitv(addrs, vals, d) == unix.ENOSYS {
		waitvMissing.Store(true)
		Wait(addrs[0], vals[0], d)
	}
}

// waitv is futex_waitv(2) on addrs, returning its errno (ETIMEDOUT when
// the timeout passed, EAGAIN when a word did not hold its value).
func waitv(addrs []*atomic.Uint32, vals []uint32, d time.Duration) unix.Errno {
	var ws [maxWaitv]waitvEntry
	for i, a := range addrs {
		ws[i] = waitvEntry{val: uint64(vals[i]), uaddr: uint64(uintptr(unsafe.Pointer(a))), flags: waitvSize32}
	}
	// futex_waitv's timeout is absolute, on the clock its last argument
	// names.
	var now unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &now)
	abs := unix.NsecToTimespec(now.Nano() + int64(d))
	_, _, errno := unix.Syscall6(unix.SYS_FUTEX_WAITV, uintptr(unsafe.Pointer(&ws[0])), uintptr(len(addrs)), 0,
		uintptr(unsafe.Pointer(&abs)), clockMonotic, 0)
	return errno
}
