//go:build unix

package mmapfile

import (
	"context"
	"errors"
	"os"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ErrUnsupported reports an operation the platform or the file system
// does not offer (pre-faulting, hole punching); the caller goes on
// without it.
var ErrUnsupported = errors.New("mmapfile: not supported here")

// Map maps the first size bytes of fd, shared (MAP_SHARED): writable adds
// PROT_WRITE, populate faults every page in at once where the platform
// can (MAP_POPULATE on Linux; elsewhere pages fault on first touch).
func Map(fd int, size int64, writable, populate bool) ([]byte, error) {
	prot := unix.PROT_READ
	if writable {
		prot |= unix.PROT_WRITE
	}
	flags := unix.MAP_SHARED
	if populate {
		flags |= mapPopulate
	}
	return unix.Mmap(fd, 0, int(size), prot, flags)
}

// Unmap unmaps a mapping made by Map (or revoked by Revoke).
func Unmap(b []byte) error { return unix.Munmap(b) }

// Revoke replaces the pages of b, in place, by anonymous read-only zero
// pages (MAP_FIXED): a reader still holding a slice of b reads zeros
// instead of faulting, and the file's pages are let go. b stays a valid
// address range until Unmap.
func Revoke(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	_, err := unix.MmapPtr(-1, 0, unsafe.Pointer(unsafe.SliceData(b)), uintptr(len(b)),
		unix.PROT_READ, unix.MAP_PRIVATE|unix.MAP_ANON|unix.MAP_FIXED)
	return err
}

// Sync makes b[from:to] of a shared mapping durable: msync(MS_SYNC) over
// the pages that hold it, which on Linux writes the dirty pages back and
// waits, as fdatasync does for that range (with the metadata needed to
// read them back, such as the conversion of preallocated extents).
func Sync(b []byte, from, to int64) error {
	if to <= from {
		return nil
	}
	page := int64(os.Getpagesize())
	from &^= page - 1
	return unix.Msync(b[from:to], unix.MS_SYNC)
}

// TryLock takes an exclusive advisory lock on fd without waiting (flock
// LOCK_EX|LOCK_NB, retried on EINTR). It reports false, and no error,
// when another open file description holds it. The kernel drops the lock
// when the last descriptor of this description closes, so a dead process
// never holds one.
func TryLock(fd int) (bool, error) {
	for {
		err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EWOULDBLOCK):
			return false, nil
		default:
			return false, err
		}
	}
}

// LockHeld reports whether another open file description holds an
// exclusive lock on fd (TryLock's): it tries a shared lock without
// waiting and lets go of it at once. One system call while the lock is
// held; two while it is free. Probers using it do not see each other's
// probes as the holder, as they would with TryLock.
func LockHeld(fd int) (bool, error) {
	for {
		err := unix.Flock(fd, unix.LOCK_SH|unix.LOCK_NB)
		switch {
		case err == nil:
			return false, unix.Flock(fd, unix.LOCK_UN)
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EWOULDBLOCK):
			return true, nil
		default:
			return false, err
		}
	}
}

// Unlock lets go of the lock TryLock took.
func Unlock(fd int) error { return unix.Flock(fd, unix.LOCK_UN) }

// Preallocate gives fd size bytes of real storage with allocate (Fallocate,
// or a test's stand-in), or by writing zeros where the file system or the
// platform cannot (EOPNOTSUPP, ENOTSUP, ENOSYS): the file is never sparse,
// so a full disk is an error here (ENOSPC) and never a SIGBUS later.
func Preallocate(fd int, size int64, allocate func(fd int, size int64) error) error {
	err := allocate(fd, size)
	if err == nil || (!errors.Is(err, unix.EOPNOTSUPP) && !errors.Is(err, unix.ENOTSUP) && !errors.Is(err, unix.ENOSYS)) {
		return err
	}
	return WriteZeros(fd, size)
}

// WriteZeros writes size zero bytes to fd from its start.
func WriteZeros(fd int, size int64) error {
	zeros := make([]byte, 64<<10)
	for off := int64(0); off < size; {
		n := min(int64(len(zeros)), size-off)
		w, err := unix.Pwrite(fd, zeros[:n], off)
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return err
		}
		off += int64(w)
	}
	return nil
}

// SyncDir makes dir's entries (a file created, renamed or removed in it)
// durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// Wait sleeps for d or until ctx ends, and returns ctx's error if it did:
// the pause between two looks at a file another process is still making.
func Wait(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
