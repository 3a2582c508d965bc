package journal

import (
	"os"

	"golang.org/x/sys/unix"
)

// preallocate reserves size bytes of disk for f (fallocate), so that a
// store through the mapping never meets a full disk (which would be a
// SIGBUS): a full disk is an error here, at segment creation. File systems
// without fallocate get zeros written instead (still not sparse).
func preallocate(f *os.File, size int64) error {
	err := unix.Fallocate(int(f.Fd()), 0, 0, size)
	if err != unix.EOPNOTSUPP && err != unix.ENOSYS {
		return err
	}
	return writeZeros(f, size)
}
