package ipc

import (
	"context"
	"errors"
	"fmt"
	"github.com/dutyrt/duty/internal/ipcfile"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/dutyrt/duty/internal/mmapfile"
)

// open maps the existing duty file at path, read-write, holding one
// reference for the caller (who is not its owner). Before it touches any
// section it checks, in this order: a regular file of at least
// headerLength bytes with the magic ipcfile.Magic (ErrNotDutyFile), a version
// non-zero and at most ipcfile.LayoutVersion (ErrVersion), a consistent
// header and section table (ErrCorrupt), and the length the header
// declares (ErrTruncated). A file still being created (shorter than a
// header, an all-zero header, or version 0) is polled every
// WithPollInterval until ready or ctx ends (ErrNotReady, wrapping ctx's
// error). A missing file matches fs.ErrNotExist unless WithWaitForFile; a
// path that names no regular file gives ErrNotDutyFile at once; a file
// the caller may not open, fs.ErrPermission; with withLiveOwner, a stale or
// closed owner, ErrOwnerDead; a nil ctx, ErrArgument. Header values are used as validated copies:
// a peer that rewrites the header later cannot send this process outside
// the mapping.
func open(ctx context.Context, path string, opts ...Option) (*File, error) {
	return openWith(ctx, path, true, opts)
}

// openWith is Open and OpenReadOnly: open the file read-write or read-only,
// wait for it to be ready, validate it, and map it so.
func openWith(ctx context.Context, path string, writable bool, opts []Option) (*File, error) {
	access := unix.O_RDONLY
	if writable {
		access = unix.O_RDWR
	}
	c := newConfig(opts)
	if ctx == nil {
		return nil, fmt.Errorf("%w: open %s: nil context", ErrArgument, path)
	}
	if c.pollInterval <= 0 {
		return nil, fmt.Errorf("%w: poll interval %s", ErrArgument, c.pollInterval)
	}
	var fd int
	for {
		var err error
		fd, err = unix.Open(path, access|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.ENOENT) {
			if nerr := notRegular("open", path, true, err); nerr != nil {
				return nil, nerr
			}
		}
		oerr := osError("open", path, err)
		if !errors.Is(err, unix.ENOENT) || !c.waitForFile {
			return nil, oerr
		}
		if werr := mmapfile.Wait(ctx, c.pollInterval); werr != nil {
			return nil, fmt.Errorf("%w (%w)", oerr, werr)
		}
	}
	f, err := openFD(ctx, path, fd, c, writable)
	if err != nil {
		_ = unix.Close(fd)
		return nil, err
	}
	if c.requireLiveOwner {
		if err := f.checkOwner(c.now(), c.livenessTimeout); err != nil {
			_ = f.Close()
			return nil, err
		}
	}
	return f, nil
}

// notRegular classifies a failed open(2) of path (op names the call in the
// message) whose cause is that path names no regular file: open refuses a
// directory for writing (EISDIR), a socket (ENXIO), a symbolic link under
// O_NOFOLLOW or a loop of them (ELOOP). Then it returns an error matching
// ErrNotDutyFile, with the path, what it names and err; otherwise nil, and
// the caller classifies err. follow says whether the open followed a final
// symbolic link (path is then examined with stat) or not (lstat).
func notRegular(op, path string, follow bool, err error) error {
	var st unix.Stat_t
	var serr error
	if follow {
		serr = unix.Stat(path, &st)
	} else {
		serr = unix.Lstat(path, &st)
	}
	switch {
	case serr == nil && st.Mode&unix.S_IFMT != unix.S_IFREG:
		return fmt.Errorf("%w: %s is %s, not a regular file: %s: %w", ErrNotDutyFile, path, fileType(uint32(st.Mode)), op, err)
	case errors.Is(serr, unix.ELOOP):
		return fmt.Errorf("%w: %s is a loop of symbolic links, not a regular file: %s: %w", ErrNotDutyFile, path, op, err)
	}
	return nil
}

// fileType names the type of file a stat mode says, for messages.
func fileType(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFREG:
		return "a regular file"
	case unix.S_IFDIR:
		return "a directory"
	case unix.S_IFLNK:
		return "a symbolic link"
	case unix.S_IFIFO:
		return "a named pipe"
	case unix.S_IFSOCK:
		return "a socket"
	case unix.S_IFCHR, unix.S_IFBLK:
		return "a device"
	}
	return fmt.Sprintf("of file type %#o", mode&unix.S_IFMT)
}

// openFD waits for the file behind fd to be ready, validates it and maps it,
// read-write or read-only.
func openFD(ctx context.Context, path string, fd int, c config, writable bool) (*File, error) {
	buf := make([]byte, ipcfile.HeaderLength)
	for {
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return nil, osError("fstat", path, err)
		}
		if st.Mode&unix.S_IFMT != unix.S_IFREG {
			return nil, fmt.Errorf("%w: %s is %s, not a regular file", ErrNotDutyFile, path, fileType(uint32(st.Mode)))
		}
		var reason string
		if st.Size < ipcfile.HeaderLength {
			// A creator's file shows zeros where the magic goes until it
			// stores the whole magic word at once: anything else at the
			// start of a short file (a JSON file, a log) is another
			// program's, and waiting would not change that.
			if err := foreignStart(path, fd, st.Size); err != nil {
				return nil, err
			}
			reason = fmt.Sprintf("%d bytes, a ipcfile.Header needs %d", st.Size, ipcfile.HeaderLength)
		} else {
			ready, err := snapshotHeader(fd, buf)
			if err != nil {
				return nil, fmt.Errorf("ipc: %s: reading the header: %w", path, err)
			}
			if !ready {
				reason = "header not written yet"
			} else {
				h, err := ipcfile.Read(path, buf, st.Size)
				switch {
				case err == nil:
					return mapValidated(path, fd, h, c, writable)
				case !errors.Is(err, ipcfile.ErrNotInitialised):
					return nil, err
				}
				reason = "version 0"
			}
		}
		if werr := mmapfile.Wait(ctx, c.pollInterval); werr != nil {
			return nil, fmt.Errorf("%w: %s: %s: %w", ErrNotReady, path, reason, werr)
		}
	}
}

// snapshotHeader copies the header page into buf through a short-lived
// read-only mapping. The magic and version are loaded atomically first: a
// header whose magic is still zero, or whose version is 0 with the right
// magic, is not ready (false). Loading a non-zero version acquires every
// header store its creator made before it, so the copy that follows is
// complete. A file shrinking meanwhile faults inside Guard and is
// reported as an error.
func snapshotHeader(fd int, buf []byte) (bool, error) {
	m, err := mmapfile.Map(fd, ipcfile.HeaderLength, false, false)
	if err != nil {
		return false, err
	}
	defer mmapfile.Unmap(m)
	ready := false
	err = guardAny(func() error {
		base := unsafe.Pointer(unsafe.SliceData(m))
		magic := (*atomic.Uint64)(unsafe.Add(base, ipcfile.MagicOffset)).Load()
		version := (*atomic.Int32)(unsafe.Add(base, ipcfile.VersionOffset)).Load()
		switch {
		case magic == 0 && version == 0:
			// Nothing written yet, if the whole header is zero; otherwise
			// ipcfile.Read reports the foreign (zero) magic.
			copy(buf, m)
			ready = !ipcfile.AllZero(buf)
			return nil
		case magic != ipcfile.MagicWord:
			// Foreign: hand ipcfile.Read only the magic to report.
			clear(buf)
			copy(buf[:len(ipcfile.Magic)], m)
			ready = true
			return nil
		case version == 0:
			return nil // header being written
		}
		copy(buf, m)
		ready = true
		return nil
	})
	return ready, err
}

// mapValidated maps a validated file at its declared length, read-write
// or read-only.
func mapValidated(path string, fd int, h ipcfile.Header, c config, writable bool) (*File, error) {
	data, err := mmapfile.Map(fd, h.FileLength, writable, c.populate)
	if err != nil {
		return nil, osError("map", path, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		_ = mmapfile.Unmap(data)
		return nil, osError("fstat", path, err)
	}
	if st.Size < h.FileLength { // shrank since validation
		_ = mmapfile.Unmap(data)
		return nil, fmt.Errorf("%w: %s: %d bytes, header declares %d", ErrTruncated, path, st.Size, h.FileLength)
	}
	return newFile(path, fd, data, h, false, &st), nil
}

// foreignStart returns an error wrapping ErrNotDutyFile when the first
// bytes of a file shorter than a header (size bytes) are neither zeros nor
// the start of ipcfile.Magic.
func foreignStart(path string, fd int, size int64) error {
	var b [len(ipcfile.Magic)]byte
	n, err := unix.Pread(fd, b[:min(size, int64(len(b)))], ipcfile.MagicOffset)
	if err != nil || n <= 0 {
		return nil // unreadable or gone: the wait reports it
	}
	if ipcfile.AllZero(b[:n]) || string(b[:n]) == ipcfile.Magic[:n] {
		return nil
	}
	return fmt.Errorf("%w: %s: %d bytes starting %q", ErrNotDutyFile, path, size, b[:n])
}
