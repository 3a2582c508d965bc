package mmapfile

import (
	"errors"

	"golang.org/x/sys/unix"
)

// mapPopulate is MAP_POPULATE: fault every page in at mapping time.
const mapPopulate = unix.MAP_POPULATE

// Fallocate is fallocate(2) from offset 0: real storage for size bytes,
// and the file's length.
func Fallocate(fd int, size int64) error { return unix.Fallocate(fd, 0, 0, size) }

// PopulateWrite faults b's pages in, writable, without touching their
// bytes (madvise MADV_POPULATE_WRITE, Linux 5.14 on): a store by another
// thread to the same pages at the same time is safe, and finds them
// mapped. ErrUnsupported where the kernel does not know the advice.
func PopulateWrite(b []byte) error {
	err := unix.Madvise(b, unix.MADV_POPULATE_WRITE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		return ErrUnsupported
	}
	return err
}

// PunchHole frees the disk blocks under fd's bytes [off, off+n) and
// leaves zeros there, keeping the file's size (fallocate PUNCH_HOLE).
// ErrUnsupported where the file system cannot.
func PunchHole(fd int, off, n int64) error {
	err := unix.Fallocate(fd, unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, off, n)
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS) {
		return ErrUnsupported
	}
	return err
}
