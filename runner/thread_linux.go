//go:build linux

package runner

import (
	"fmt"
	"unicode/utf8"
	"unsafe"

	"golang.org/x/sys/unix"
)

const maxCPU = len(unix.CPUSet{}) * 64

func gettid() int { return unix.Gettid() }

// threadName truncates name to the 15 bytes the kernel keeps, on a UTF-8
// boundary.
func threadName(name string) string {
	const max = 15
	if len(name) <= max {
		return name
	}
	n := max
	for n > 0 && !utf8.RuneStart(name[n]) {
		n--
	}
	return name[:n]
}

// setupThread configures the calling (locked) thread.
func setupThread(c *config) error {
	if c.threadName != "" {
		buf := make([]byte, 16)
		copy(buf, threadName(c.threadName))
		if err := unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(&buf[0])), 0, 0, 0); err != nil {
			return fmt.Errorf("prctl(PR_SET_NAME): %w", err)
		}
	}
	if c.timerSlack > 0 {
		if err := unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(c.timerSlack.Nanoseconds()), 0, 0, 0); err != nil {
			return fmt.Errorf("prctl(PR_SET_TIMERSLACK): %w", err)
		}
	}
	if len(c.cpus) > 0 {
		var set unix.CPUSet
		for _, cpu := range c.cpus {
			set.Set(cpu)
		}
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			return fmt.Errorf("sched_setaffinity(%v): %w", c.cpus, err)
		}
	}
	return nil
}
