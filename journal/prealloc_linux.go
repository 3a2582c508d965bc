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

// populateWrite faults b's pages in, writable, without touching their
// bytes (madvise MADV_POPULATE_WRITE, Linux 5.14 on): a store by another
// thread to the same pages at the same time is safe, and finds them
// mapped. It reports errPrefaultUnsupported where the kernel does not
// know the advice.
func populateWrite(b []byte) error {
	err := unix.Madvise(b, unix.MADV_POPULATE_WRITE)
	if err == unix.EINVAL || err == unix.ENOSYS {
		return errPrefaultUnsupported
	}
	return err
}

// punchHole frees the disk blocks under f's bytes [off, off+n) and leaves
// zeros there, keeping the file's size (fallocate PUNCH_HOLE). It reports
// errPunchUnsupported where the file system cannot.
func punchHole(f *os.File, off, n int64) error {
	err := unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, off, n)
	if err == unix.EOPNOTSUPP || err == unix.ENOSYS {
		return errPunchUnsupported
	}
	return err
}
