//go:build unix && !linux && !darwin

package mmapfile

import "golang.org/x/sys/unix"

// mapPopulate is 0: MAP_POPULATE is Linux's.
const mapPopulate = 0

// Fallocate reports ENOSYS: Preallocate writes zeros instead.
func Fallocate(int, int64) error { return unix.ENOSYS }

// PopulateWrite is not available here: pages fault on first touch.
func PopulateWrite([]byte) error { return ErrUnsupported }

// PunchHole is not available here.
func PunchHole(int, int64, int64) error { return ErrUnsupported }
