//go:build unix

package journal

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mapFile maps the first size bytes of f, shared, read-write or read-only.
func mapFile(f *os.File, size int64, writable bool) ([]byte, error) {
	prot := unix.PROT_READ
	if writable {
		prot |= unix.PROT_WRITE
	}
	b, err := unix.Mmap(int(f.Fd()), 0, int(size), prot, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("journal: mmap %s: %w", f.Name(), err)
	}
	return b, nil
}

// unmap unmaps a mapping made by mapFile (or replaced by revokeMapping).
func unmap(b []byte) error { return unix.Munmap(b) }

// revokeMapping replaces the pages of b, in place, by anonymous read-only
// zero pages (mmap MAP_FIXED): a reader still holding a slice of b reads
// zeros instead of faulting, and the file's pages are let go. b stays a
// valid address range until unmap.
func revokeMapping(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	_, err := unix.MmapPtr(-1, 0, unsafe.Pointer(unsafe.SliceData(b)), uintptr(len(b)),
		unix.PROT_READ, unix.MAP_PRIVATE|unix.MAP_ANON|unix.MAP_FIXED)
	return err
}

// syncRange makes b[from:to] of a mapping durable: msync(MS_SYNC) over the
// pages that hold it. On Linux, msync of a shared file mapping writes the
// dirty pages back and waits, as fdatasync does for that range (including
// the metadata needed to read them back, such as the conversion of
// preallocated extents).
func syncRange(b []byte, from, to int64) error {
	if to <= from {
		return nil
	}
	page := int64(os.Getpagesize())
	from &^= page - 1
	if err := unix.Msync(b[from:to], unix.MS_SYNC); err != nil {
		return fmt.Errorf("journal: msync: %w", err)
	}
	return nil
}

// lockDir takes the writer lock: an exclusive, non-blocking flock on f.
// The kernel drops it when the process dies.
func lockFile(f *os.File) error {
	err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if err == unix.EWOULDBLOCK {
		return fmt.Errorf("%w: %s", ErrLocked, f.Name())
	}
	if err != nil {
		return fmt.Errorf("journal: flock %s: %w", f.Name(), err)
	}
	return nil
}

// syncDir makes the directory's entries (a created, renamed or removed
// file) durable.
func syncDir(dir string) error {
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

// writeZeros writes size zero bytes to f from its start.
func writeZeros(f *os.File, size int64) error {
	zeros := make([]byte, 64<<10)
	for off := int64(0); off < size; off += int64(len(zeros)) {
		if _, err := f.WriteAt(zeros[:min(int64(len(zeros)), size-off)], off); err != nil {
			return err
		}
	}
	return nil
}
