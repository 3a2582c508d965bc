package ipc

import "golang.org/x/sys/unix"

// mapPopulate is the mmap flag of WithPopulate: fault every page in at
// mapping time.
const mapPopulate = unix.MAP_POPULATE

// sysFallocate is fallocate(2): real storage for the whole file, and its
// length.
func sysFallocate(fd int, mode uint32, off, size int64) error {
	return unix.Fallocate(fd, mode, off, size)
}
