package ipc

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// fallocate is unix.Fallocate; tests replace it to exercise the fallback
// and the full-file-system path.
var fallocate = unix.Fallocate

// checkSpaceFn is checkSpace; a test disables it to reach fallocate's own
// ENOSPC.
var checkSpaceFn = checkSpace

// Create creates the duty file dir/name (dir "" means DefaultDir(), created
// with mode 0700 if missing) of the given kind, with one section per entry
// of sections (their lengths in bytes, each > 0), and returns it mapped,
// owned by the caller, holding one reference.
//
// The file is created exclusively (O_EXCL, or link(2), which also fails on
// an existing name: of two processes creating the same name, exactly one
// wins and the other gets ErrExists), with mode 0600 unless WithMode says
// otherwise, preallocated with fallocate (or by writing zeros where the file
// system lacks it) so that a full file system fails here with ErrNoSpace and
// never later with SIGBUS, and mapped MAP_SHARED. The magic is written
// first, then the header, then (atomically, last) the layout version: the
// ready signal. By default the file is built under a temporary name and linked to
// its final name once complete (see WithDirectCreate). On any failure the
// half-made file is removed.
//
// The caller is the owner: it holds an exclusive flock on the file until it
// closes it, and must call Heartbeat more often than the liveness timeout
// (WithLivenessTimeout, default 10 s) for other processes to see it alive.
// Sections start on SectionAlignment boundaries and are zero.
func Create(dir, name string, kind Kind, sections []int, opts ...Option) (*File, error) {
	c := newConfig(opts)
	if err := ValidateName(name); err != nil {
		return nil, err
	}
	if kind < 1 {
		return nil, fmt.Errorf("%w: kind %d", ErrArgument, kind)
	}
	if c.mode&^fs.ModePerm != 0 {
		return nil, fmt.Errorf("%w: mode %v has bits beyond the permissions", ErrArgument, c.mode)
	}
	timeout := c.livenessTimeout
	if timeout == 0 {
		timeout = DefaultLivenessTimeout
	}
	if timeout < time.Millisecond {
		return nil, fmt.Errorf("%w: liveness timeout %s below 1 ms", ErrArgument, timeout)
	}
	h, err := layout(kind, sections)
	if err != nil {
		return nil, err
	}
	h.livenessTimeout = timeout.Milliseconds()
	if dir == "" {
		dir = DefaultDir()
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, osError("create directory", dir, err)
	}
	if err := checkSpaceFn(dir, h.fileLength); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, name)
	if c.direct {
		for attempt := 0; ; attempt++ {
			f, err := build(path, path, h, c)
			if err == nil || !errors.Is(err, ErrExists) || !c.replaceStale || attempt == 2 {
				return f, err
			}
			if err := replaceStale(path, c); err != nil {
				return nil, err
			}
		}
	}
	tmp, err := tempName(dir, name)
	if err != nil {
		return nil, err
	}
	f, err := build(tmp, path, h, c)
	if err != nil {
		return nil, err
	}
	defer unix.Unlink(tmp) // the final name keeps the inode
	for attempt := 0; ; attempt++ {
		err := unix.Link(tmp, path)
		if err == nil {
			return f, nil
		}
		err = osError("link", path, err)
		if errors.Is(err, ErrExists) && c.replaceStale && attempt < 2 {
			if err = replaceStale(path, c); err == nil {
				continue
			}
		}
		f.Close()
		return nil, err
	}
}

// replaceStale removes path for WithReplaceStale, tolerating a concurrent
// removal.
func replaceStale(path string, c config) error {
	err := removeIfStale(path, c)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// layout computes the header fields that depend only on the sections.
func layout(kind Kind, sections []int) (header, error) {
	if len(sections) < 1 || len(sections) > MaxSections {
		return header{}, fmt.Errorf("%w: %d sections, want 1 to %d", ErrArgument, len(sections), MaxSections)
	}
	h := header{version: LayoutVersion, kind: kind, sections: make([]section, len(sections))}
	off := int64(HeaderLength)
	for i, n := range sections {
		if n <= 0 || int64(n) > maxFileLength-off {
			return header{}, fmt.Errorf("%w: section %d of %d bytes", ErrArgument, i, n)
		}
		h.sections[i] = section{offset: off, length: int64(n)}
		off = alignUp(off+int64(n), SectionAlignment)
	}
	if off > maxFileLength || off != int64(int(off)) {
		return header{}, fmt.Errorf("%w: file of %d bytes", ErrArgument, off)
	}
	h.fileLength = off
	return h, nil
}

// checkSpace fails early, with a clear message, when the file system has
// less room than the file needs. fallocate remains the real check.
func checkSpace(dir string, need int64) error {
	var s unix.Statfs_t
	if err := unix.Statfs(dir, &s); err != nil || s.Blocks == 0 {
		return nil // unknown: let fallocate decide
	}
	avail := int64(s.Bavail) * int64(s.Bsize)
	if avail < need {
		return fmt.Errorf("%w: %s has %d bytes free, the file needs %d (%w)", ErrNoSpace, dir, avail, need, syscall.ENOSPC)
	}
	return nil
}

// tempName returns a unique hidden name in dir for a file being built.
func tempName(dir, name string) (string, error) {
	var r [8]byte
	if _, err := rand.Read(r[:]); err != nil {
		return "", fmt.Errorf("ipc: temporary name: %w", err)
	}
	return filepath.Join(dir, tempPrefix+name+"."+strconv.Itoa(os.Getpid())+"."+hex.EncodeToString(r[:])), nil
}

// build creates target exclusively, sizes, maps and initialises it, and
// returns it as a File whose Path is path. On failure target is removed.
func build(target, path string, h header, c config) (f *File, err error) {
	fd, err := unix.Open(target, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC|unix.O_NOFOLLOW, uint32(c.mode))
	if err != nil {
		return nil, osError("create", target, err)
	}
	var data []byte
	defer func() {
		if err != nil {
			if data != nil {
				_ = unix.Munmap(data)
			}
			_ = unix.Unlink(target)
			_ = unix.Close(fd)
		}
	}()
	// The lock is the owner's proof of life for RemoveIfStale; it is taken
	// before anything else so the file is never unlocked while it is built.
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return nil, osError("lock", target, err)
	}
	if err := unix.Fchmod(fd, uint32(c.mode)); err != nil { // bypass the umask
		return nil, osError("chmod", target, err)
	}
	if err := preallocate(fd, h.fileLength); err != nil {
		return nil, osError("preallocate", target, err)
	}
	flags := unix.MAP_SHARED
	if c.populate {
		flags |= unix.MAP_POPULATE
	}
	data, err = unix.Mmap(fd, 0, int(h.fileLength), unix.PROT_READ|unix.PROT_WRITE, flags)
	if err != nil {
		data = nil
		return nil, osError("map", target, err)
	}
	h.ownerPID = int64(os.Getpid())
	h.ownerStartTime = int64(selfStartTime())
	h.created = c.now().UnixMilli()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, osError("fstat", target, err)
	}
	f = newFile(path, fd, data, h, true, &st)
	if err := f.guarded(func() error { writeHeader(data, h); return nil }); err != nil {
		return nil, err
	}
	return f, nil
}

// writeHeader initialises a zero header: the magic first (one atomic
// 8-byte store, so nobody sees it torn), then the fields with plain stores
// into memory nobody reads yet (a temporary file, or a file whose readers
// wait for the version), the heartbeat, and last the version with
// sync/atomic (sequentially consistent, so at least a release): a process
// that loads a non-zero version sees every header field stored before it.
// A header is therefore all zero, or has the magic, at every instant of its
// creation: anything else is not a duty file.
func writeHeader(b []byte, h header) {
	le := binary.LittleEndian
	(*atomic.Uint64)(unsafe.Pointer(&b[MagicOffset])).Store(magicWord)
	le.PutUint32(b[KindOffset:], uint32(h.kind))
	le.PutUint32(b[HeaderLengthOffset:], HeaderLength)
	le.PutUint32(b[SectionCountOffset:], uint32(len(h.sections)))
	le.PutUint32(b[SectionAlignmentOffset:], SectionAlignment)
	le.PutUint64(b[FileLengthOffset:], uint64(h.fileLength))
	le.PutUint64(b[OwnerPIDOffset:], uint64(h.ownerPID))
	le.PutUint64(b[OwnerStartTimeOffset:], uint64(h.ownerStartTime))
	le.PutUint64(b[CreatedOffset:], uint64(h.created))
	le.PutUint64(b[LivenessTimeoutOffset:], uint64(h.livenessTimeout))
	for i, s := range h.sections {
		e := sectionEntry(i)
		le.PutUint64(b[e+SectionOffsetField:], uint64(s.offset))
		le.PutUint64(b[e+SectionLengthField:], uint64(s.length))
	}
	(*atomic.Int64)(unsafe.Pointer(&b[HeartbeatOffset])).Store(h.created)
	(*atomic.Int32)(unsafe.Pointer(&b[VersionOffset])).Store(h.version)
}

// preallocate gives the file size bytes of real storage: fallocate, or
// zeros written with pwrite where the file system does not support it.
func preallocate(fd int, size int64) error {
	err := fallocate(fd, 0, 0, size)
	if err == nil || (!errors.Is(err, unix.EOPNOTSUPP) && !errors.Is(err, unix.ENOSYS)) {
		return err
	}
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
