//go:build !linux && !darwin

package ipc

import "golang.org/x/sys/unix"

// mapPopulate is 0: MAP_POPULATE is Linux's, so WithPopulate maps as usual.
const mapPopulate = 0

// sysFallocate reports ENOSYS: preallocate writes zeros instead.
func sysFallocate(fd int, mode uint32, off, size int64) error { return unix.ENOSYS }
