//go:build linux

package idle

import "golang.org/x/sys/unix"

// osYield gives up the CPU to another runnable OS thread (sched_yield(2)),
// which is what Java's Thread.yield does. On a goroutine locked to its
// thread this is far cheaper than runtime.Gosched, which hands the P to
// another thread and back (two futex wake-ups); see docs/idle.md.
func osYield() {
	unix.RawSyscallNoError(unix.SYS_SCHED_YIELD, 0, 0, 0)
}
