package ipc

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/dutyrt/duty/internal/ipcfile"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dutyrt/duty/internal/mmapfile"
)

// fallocate is the platform's preallocation (mmapfile.Fallocate:
// fallocate(2) on Linux, fcntl F_PREALLOCATE on darwin); tests replace it
// to exercise the fallback and the full-file-system path.
var fallocate = mmapfile.Fallocate

// checkSpaceFn is checkSpace; a test disables it to reach fallocate's own
// ENOSPC.
var checkSpaceFn = checkSpace

// create creates the duty file dir/name (dir "" means DefaultDir(), created
// with mode 0700 if missing) of the given kind, with one section per entry
// of sections (their lengths in bytes, each > 0), and returns it mapped,
// owned by the caller, holding one reference.
//
// The file is created exclusively (O_EXCL, or link(2), which also fails on
// an existing name: of two processes creating the same name, exactly one
// wins and the other gets fs.ErrExist), with mode 0600 unless WithMode says
// otherwise, preallocated with fallocate (F_PREALLOCATE on darwin; zeros
// written where the file system lacks it) so that a full file system fails
// here with syscall.ENOSPC and never later with SIGBUS, and mapped MAP_SHARED. The magic is written
// first, then the header, then (atomically, last) the layout version: the
// ready signal. By default the file is built under a temporary name and linked to
// its final name once complete (see withDirectCreate). On any failure the
// half-made file is removed, with one exception: if another process (a
// cleaner, see RemoveIfStale) holds the lock of the new, empty file for
// longer than 1 s, create returns fs.ErrExist and leaves that file to it.
//
// The caller is the owner: it holds an exclusive flock on the file until it
// closes it (taken right after the file is created; a cleaner that opened
// the empty file in between is waited for, and if it removed the file, the
// name is created again, or fs.ErrExist returned if someone else has taken
// it), and must call Heartbeat more often than the liveness timeout
// (WithLivenessTimeout, default 10 s) for other processes to see it alive.
// Sections start on ipcfile.SectionAlignment boundaries and are zero.
func create(dir, name string, kind Kind, sections []int, opts ...Option) (*File, error) {
	c := newConfig(opts)
	if err := validateName(name); err != nil {
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
		timeout = defaultLivenessTimeout
	}
	if timeout < time.Millisecond {
		return nil, fmt.Errorf("%w: liveness timeout %s below 1 ms", ErrArgument, timeout)
	}
	h, err := ipcfile.Layout(int32(kind), sections)
	if err != nil {
		return nil, err
	}
	h.LivenessTimeout = timeout.Milliseconds()
	if dir == "" {
		dir = DefaultDir()
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, osError("create directory", dir, err)
	}
	if err := checkSpaceFn(dir, h.FileLength); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, name)
	if c.direct {
		for attempt := 0; ; attempt++ {
			f, err := build(path, path, h, c)
			if err == nil || !errors.Is(err, errExists) || !c.replaceStale || attempt == 2 {
				return f, staleHint(err, path, c)
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
	// tmp names f's inode until it is unlinked, under f's lock: no cleaner
	// removes a locked file, and nobody else uses the random name.
	for attempt := 0; ; attempt++ {
		err := unix.Link(tmp, path)
		if err == nil {
			_ = unix.Unlink(tmp) // the final name keeps the inode
			return f, nil
		}
		err = osError("link", path, err)
		if errors.Is(err, errExists) && c.replaceStale && attempt < 2 {
			if err = replaceStale(path, c); err == nil {
				continue
			}
		}
		_ = unix.Unlink(tmp)
		f.Close()
		return nil, staleHint(err, path, c)
	}
}

// staleHint adds to an fs.ErrExist from Create, when the file in the way has
// an owner that is provably gone, how to replace it.
func staleHint(err error, path string, c config) error {
	if err == nil || !errors.Is(err, errExists) || c.replaceStale || !isStale(path, c) {
		return err
	}
	return fmt.Errorf("%w (its owner is gone: Create with WithReplaceStale replaces it; RemoveIfStale or Cleanup removes it)", err)
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

// checkSpace fails early, with a clear message, when the file system has
// less room than the file needs. fallocate remains the real check.
func checkSpace(dir string, need int64) error {
	var s unix.Statfs_t
	if err := unix.Statfs(dir, &s); err != nil || s.Blocks == 0 {
		return nil // unknown: let fallocate decide
	}
	avail := int64(s.Bavail) * int64(s.Bsize)
	if avail < need {
		return fmt.Errorf("%w: %s has %d bytes free, the file needs %d", errNoSpace, dir, avail, need)
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
// returns it as a File whose Path is path. On failure target is removed
// (only while it still names the new inode, which build has locked).
func build(target, path string, h ipcfile.Header, c config) (f *File, err error) {
	fd, st, err := createLocked(target, c.mode)
	if err != nil {
		return nil, err
	}
	var data []byte
	defer func() {
		if err != nil {
			if data != nil {
				_ = mmapfile.Unmap(data)
			}
			// Under our lock no cleaner unlinks the inode, so if target
			// still names it here, it names it at the unlink too.
			_ = removeLocked(target, &st)
			_ = unix.Close(fd)
		}
	}()
	if err := unix.Fchmod(fd, uint32(c.mode)); err != nil { // bypass the umask
		return nil, osError("chmod", target, err)
	}
	if err := mmapfile.Preallocate(fd, h.FileLength, fallocate); err != nil {
		return nil, osError("preallocate", target, err)
	}
	data, err = mmapfile.Map(fd, h.FileLength, true, c.populate)
	if err != nil {
		data = nil
		return nil, osError("map", target, err)
	}
	h.OwnerPID = int64(os.Getpid())
	h.OwnerStartTime = int64(selfStartTime())
	h.Created = c.now().UnixMilli()
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, osError("fstat", target, err)
	}
	f = newFile(path, fd, data, h, true, &st)
	if err := f.guarded(func() error { ipcfile.Write(data, h); return nil }); err != nil {
		return nil, err
	}
	return f, nil
}

// Creation races. Between createLocked's open(O_EXCL) and its flock the new
// file is empty and unlocked: a cleaner (RemoveIfStale, Cleanup, another
// creator's WithReplaceStale) may open it and take its lock to inspect it,
// and, if its clock or liveness timeout makes the empty file look
// abandoned, unlink it. RemoveIfStale never calls an empty file younger
// than minCreationAge abandoned, so that takes a creator stalled that long
// (or a cleaner whose clock is wrong); createLocked checks for it anyway.
var (
	// creationLockWait bounds how long createLocked waits for the lock on
	// the file it has just created. Only a cleaner can hold it (the inode is
	// new, and no creator locks a file it did not create), for a few system
	// calls; longer only if that process is stopped (SIGSTOP, a debugger).
	// A variable for tests.
	creationLockWait = time.Second
	// afterCreateOpen, when not nil, runs between createLocked's open and
	// its flock: tests put a cleaner there.
	afterCreateOpen func(target string)
)

// createAttempts bounds how many times createLocked creates target again
// after a cleaner removed the empty file it had just created.
const createAttempts = 5

// createLocked creates target exclusively (an empty file of the given
// mode, less the umask) and takes the owner's exclusive lock on it,
// waiting up to creationLockWait for a cleaner that inspects it in the
// meantime. It returns the descriptor and the inode, which target is then
// known to name: once locked, no cleaner unlinks it. If a cleaner removed
// the file before the lock, the name is created again, at most
// createAttempts times; a name that someone else has taken meanwhile is
// fs.ErrExist. On failure it never unlinks a name it cannot prove names its
// own inode while it holds that inode's lock: a file whose lock it could
// not get is left to the process holding it (empty and unlocked, it is an
// abandoned creation for RemoveIfStale and Cleanup).
func createLocked(target string, mode fs.FileMode) (int, unix.Stat_t, error) {
	var st unix.Stat_t
	for attempt := 1; ; attempt++ {
		fd, err := unix.Open(target, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC|unix.O_NOFOLLOW, uint32(mode))
		if err != nil {
			return -1, st, osError("create", target, err)
		}
		if afterCreateOpen != nil {
			afterCreateOpen(target)
		}
		// The lock is the owner's proof of life for RemoveIfStale; it is
		// taken before anything else is done to the file.
		if err := lockNew(fd); err != nil {
			if errors.Is(err, unix.EWOULDBLOCK) {
				_ = unix.Close(fd)
				return -1, st, fmt.Errorf("%w: lock %s: another process has held the lock of the new, empty file for %s: %w",
					errExists, target, creationLockWait, err)
			}
			// flock itself fails here (no lock support): so it does for
			// every cleaner, which then never unlinks anything.
			if unix.Fstat(fd, &st) == nil {
				_ = removeLocked(target, &st)
			}
			_ = unix.Close(fd)
			return -1, st, osError("lock", target, err)
		}
		if err := unix.Fstat(fd, &st); err != nil {
			_ = unix.Close(fd)
			return -1, st, osError("fstat", target, err)
		}
		var cur unix.Stat_t
		lerr := unix.Lstat(target, &cur)
		if st.Nlink > 0 && lerr == nil && cur.Dev == st.Dev && cur.Ino == st.Ino {
			return fd, st, nil
		}
		// A cleaner unlinked the file before we locked it: the inode is
		// ours alone, and the name is free again or someone else's.
		_ = unix.Close(fd)
		if lerr != nil && !errors.Is(lerr, unix.ENOENT) {
			return -1, st, osError("stat", target, lerr)
		}
		if attempt == createAttempts {
			return -1, st, fmt.Errorf("%w: %s: removed by another process while being created, %d times", errExists, target, attempt)
		}
	}
}

// lockNew takes LOCK_EX on a file createLocked has just created, retrying
// for up to creationLockWait while another process (a cleaner) holds it.
func lockNew(fd int) error {
	deadline := time.Now().Add(creationLockWait)
	pause := 20 * time.Microsecond
	for {
		locked, err := mmapfile.TryLock(fd)
		switch {
		case err != nil:
			return err
		case locked:
			return nil
		case !time.Now().Before(deadline):
			return unix.EWOULDBLOCK
		}
		time.Sleep(pause)
		pause = min(2*pause, 5*time.Millisecond)
	}
}
