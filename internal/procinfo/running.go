//go:build unix

package procinfo

import (
	"errors"

	"golang.org/x/sys/unix"
)

// Running reports whether pid exists, is not a zombie, and (when both are
// known) started at start (0: unknown, not compared). kill(pid, 0)
// answers for processes of other users too (EPERM means it exists).
// Where the process table cannot say more (Info's known is false), kill's
// answer stands: a live process is never reported dead for want of a way
// to ask.
func Running(pid int, start uint64) bool {
	if pid <= 0 {
		return false
	}
	if err := unix.Kill(pid, 0); err != nil && !errors.Is(err, unix.EPERM) {
		return false
	}
	st, gone, known := Info(pid)
	switch {
	case !known:
		return true
	case gone:
		return false
	}
	return start == 0 || st == start
}
