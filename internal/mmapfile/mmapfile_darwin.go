package mmapfile

import (
	"errors"

	"golang.org/x/sys/unix"
)

// mapPopulate is 0: darwin has no MAP_POPULATE, so pages fault in on
// first touch.
const mapPopulate = 0

// Fallocate does what fallocate(2) from offset 0 does with what darwin
// has: fcntl(F_PREALLOCATE) reserves the blocks (all of them or none,
// F_ALLOCATEALL) and ftruncate sets the length, which F_PREALLOCATE
// leaves alone. F_PEOFPOSMODE counts from the end of the space already
// allocated, so only the missing bytes are asked for. A file system that
// does not support it (ENOTSUP, or EINVAL from some) gives ENOTSUP, on
// which Preallocate writes zeros instead; a full one ENOSPC.
func Fallocate(fd int, size int64) error {
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

// PopulateWrite is not available here: pages fault on first touch.
func PopulateWrite([]byte) error { return ErrUnsupported }

// PunchHole is not available here.
func PunchHole(int, int64, int64) error { return ErrUnsupported }
