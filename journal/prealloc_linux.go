package journal

import (
	"os"

	"golang.org/x/sys/unix"
)

// preallocate reserves size bytes of disk for f (fallocate), so that a
// write through the mapping never meets a full disk (which would be a
// SIGBUS). File systems without fallocate get a sparse file (ftruncate).
func preallocate(f *os.File, size int64) error {
	err := unix.Fallocate(int(f.Fd()), 0, 0, size)
	if err == unix.EOPNOTSUPP || err == unix.ENOSYS {
		return f.Truncate(size)
	}
	return err
}
