package ipc

import (
	"errors"
	"fmt"
	"github.com/dutyrt/duty/internal/ipcfile"
	"io/fs"
	"syscall"

	"github.com/dutyrt/duty/internal/sentinel"
)

// Sentinel errors. Functions wrap them with the path and the numbers that
// failed (fmt.Errorf with %w); test with errors.Is.
var (
	// ErrNotDutyFile reports a file whose first 8 bytes are not the magic "DUTYSHM\x00", or a
	// path that names no regular file (a directory, a socket, a device, a
	// symbolic link where links are not followed).
	ErrNotDutyFile = ipcfile.ErrNotDutyFile
	// ErrVersion reports a layout version this package cannot read; the
	// message carries both numbers.
	ErrVersion = ipcfile.ErrVersion
	// ErrTruncated reports a file shorter than its header declares, or one
	// that shrank under a live mapping.
	ErrTruncated = ipcfile.ErrTruncated
	// ErrNotReady reports a file that is still being created (shorter than
	// a header, or version 0) when the context ended.
	ErrNotReady = ipcfile.ErrNotReady
	// ErrCorrupt reports a header with a valid magic and version whose other
	// fields no correct creator writes (a section outside the file, a bad
	// header length, ...).
	ErrCorrupt = ipcfile.ErrCorrupt
	// ErrKind reports a valid file of another kind than the caller expects.
	ErrKind = errors.New("ipc: wrong file kind")
	// ErrOwnerAlive reports a refusal to remove or replace a file whose owner
	// is not provably dead.
	ErrOwnerAlive = errors.New("ipc: owner is alive")
	// ErrOwnerDead reports a file whose owner is dead or closed it, where the
	// caller asked for a live owner.
	ErrOwnerDead = errors.New("ipc: owner is dead")
	// ErrNotOwner reports an owner-only operation (Heartbeat, Remove) on a
	// File that was opened, not created.
	ErrNotOwner = errors.New("ipc: not the owner of the file")
	// ErrClosed reports a use of a File after it was
	// closed (its last reference released).
	ErrClosed = sentinel.Closed("ipc: file closed")
	// ErrFault reports a memory fault (SIGBUS/SIGSEGV) caught by Guard while
	// touching a mapping: typically a file truncated under the mapping.
	ErrFault = errors.New("ipc: memory fault on a mapped file")
	// errName reports a file name that is empty, contains a path separator
	// or a NUL, is "." or "..", is too long, or uses the temporary prefix.
	// It matches ErrArgument.
	errName error = &fsSentinel{"ipc: invalid file name", ErrArgument}
	// ErrArgument reports an invalid argument (section lengths, capacity,
	// timeouts, mode).
	ErrArgument = ipcfile.ErrArgument
	// errNoSpace reports a file system without room for a new file (also a
	// quota, EDQUOT). It matches syscall.ENOSPC.
	errNoSpace error = &fsSentinel{"ipc: no space left on the file system", syscall.ENOSPC}

	// errPermission reports a file or directory the caller may not open or
	// create. It wraps fs.ErrPermission.
	errPermission error = &fsSentinel{"ipc: permission denied", fs.ErrPermission}
	// errExists reports a Create of a name that already exists. It wraps
	// fs.ErrExist.
	errExists error = &fsSentinel{"ipc: file already exists", fs.ErrExist}
)

// fsSentinel is a sentinel that also matches a more general one (package
// fs's, an errno, ErrArgument), without repeating its text (a %w would read
// "file already exists: file already exists" before the errno's own words).
type fsSentinel struct {
	msg string
	fs  error
}

func (e *fsSentinel) Error() string { return e.msg }
func (e *fsSentinel) Unwrap() error { return e.fs }

// faultError reports a memory fault caught by Guard. It matches ErrFault,
// and ErrTruncated when the file was found shorter than the mapping.
type faultError struct {
	Addr      uintptr // faulting address
	Truncated bool    // the file is now shorter than the mapping
	Size      int64   // the file's size after the fault (-1 if unknown)
	Mapped    int64   // the mapping's length (-1 if unknown)
}

func (e *faultError) Error() string {
	if e.Truncated {
		return fmt.Sprintf("ipc: memory fault at %#x: file truncated to %d bytes under a %d-byte mapping", e.Addr, e.Size, e.Mapped)
	}
	return fmt.Sprintf("ipc: memory fault at %#x on a mapped file", e.Addr)
}

// Is makes errors.Is match ErrFault, and ErrTruncated when Truncated.
func (e *faultError) Is(target error) bool {
	return target == ErrFault || (e.Truncated && target == ErrTruncated)
}

// osError classifies an error from a file system call: permission and
// existence errors get this package's sentinels (which wrap fs's), a full
// file system errNoSpace (which matches syscall.ENOSPC); the errno stays in
// the chain.
func osError(op, path string, err error) error {
	switch {
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		return fmt.Errorf("%w: %s %s: %w", errPermission, op, path, err)
	case errors.Is(err, syscall.EEXIST):
		return fmt.Errorf("%w: %s %s: %w", errExists, op, path, err)
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return fmt.Errorf("%w: %s %s: %w", errNoSpace, op, path, err)
	}
	return fmt.Errorf("ipc: %s %s: %w", op, path, err)
}
