package ipc

import (
	"errors"

	"golang.org/x/sys/unix"
)

// mapPopulate is 0: darwin has no MAP_POPULATE, so WithPopulate maps as
// usual and pages are faulted in on first touch.
const mapPopulate = 0

// sysFallocate does what fallocate(2) does for Create (mode 0, offset 0)
// with what darwin has: fcntl(F_PREALLOCATE) reserves the blocks (all of
// them or none, F_ALLOCATEALL) and ftruncate sets the length, which
// F_PREALLOCATE leaves alone. F_PEOFPOSMODE counts from the end of the
// space already allocated, so only the missing bytes are asked for. A file
// system that does not support it (ENOTSUP, or EINVAL from some) gives
// ENOTSUP, on which preallocate writes zeros instead; a full one ENOSPC.
func sysFallocate(fd int, mode uint32, off, size int64) error {
	if mode != 0 || off != 0 {
		return unix.EINVAL
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if missing := size - st.Blocks*512; missing > 0 {
		fs := unix.Fstore_t{Flags: unix.F_ALLOCATEALL, Posmode: unix.F_PEOFPOSMODE, Length: missing}
		err := unix.FcntlFstore(uintptr(fd), unix.F_PREALLOCATE, &fs)
		for errors.Is(err, unix.EINTR) {
			err = unix.FcntlFstore(uintptr(fd), unix.F_PREALLOCATE, &fs)
		}
		switch {
		case errors.Is(err, unix.ENOTSUP), errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.EINVAL):
			return unix.ENOTSUP
		case err != nil:
			return err
		}
	}
	if st.Size >= size {
		return nil
	}
	return unix.Ftruncate(fd, size)
}
