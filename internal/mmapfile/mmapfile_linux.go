package mmapfile

import (
	"errors"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mapPopulate is MAP_POPULATE: fault every page in at mapping time.
const mapPopulate = unix.MAP_POPULATE

// Fallocate is fallocate(2) from offset 0: real storage for size bytes,
// and the file's length.
func Fallocate(fd int, size int64) error { return unix.Fallocate(fd, 0, 0, size) }

// populateChunk is the most one madvise call of PopulateWrite covers.
const populateChunk = 256 << 10

// PopulateWrite faults b's pages in, writable, without touching their
// bytes (madvise MADV_POPULATE_WRITE, Linux 5.14 on): a store by another
// thread to the same pages at the same time is safe, and finds them
// mapped. ErrUnsupported where the kernel does not know the advice.
//
// The calls are raw (the Go runtime is not told of them), populateChunk
// bytes each. Zero-filling fresh pages is work on this CPU, not a wait;
// told of a system call that outlives one of its monitor's ticks, the
// runtime takes the thread's P and hands it on, starting another thread,
// and its monitor keeps waking at its shortest interval: with as many
// busy threads as CPUs, those wake-ups preempt the writer the pre-faulting
// serves. The chunk bounds how long the P is held past a preemption
// request or a stop-the-world (madvise does not return early for a
// signal). Pages that must be read from disk (a file written before)
// block the thread for one chunk's reads at a time.
func PopulateWrite(b []byte) error {
	for len(b) > 0 {
		n := min(len(b), populateChunk)
		_, _, errno := unix.RawSyscall(unix.SYS_MADVISE, uintptr(unsafe.Pointer(&b[0])), uintptr(n), unix.MADV_POPULATE_WRITE)
		switch errno {
		case 0:
			b = b[n:]
		case unix.EINTR: // the same chunk again
		case unix.EINVAL, unix.ENOSYS:
			return ErrUnsupported
		default:
			return errno
		}
	}
	return nil
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
