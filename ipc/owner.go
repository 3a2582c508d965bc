package ipc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/dutyrt/duty/internal/ipcfile"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dutyrt/duty/internal/procinfo"

	"github.com/dutyrt/duty/internal/mmapfile"
)

// OwnerState is what a file's header and the process table say about its
// owner.
type OwnerState int

const (
	// OwnerAlive: the owner's process is running (its pid exists with the start
	// time in the header) and its heartbeat is fresh.
	OwnerAlive OwnerState = iota + 1
	// OwnerUnconfirmed: the heartbeat is fresh but no process with the owner's
	// pid and start time is visible: it died less than a timeout ago, or
	// it runs in another pid namespace. Treated as alive: never removed.
	OwnerUnconfirmed
	// OwnerHung: the owner's process is running but its heartbeat is stale
	// (paused, stuck, or not calling Heartbeat). Never removed.
	OwnerHung
	// OwnerClosed: the owner closed the file (heartbeat -1).
	OwnerClosed
	// OwnerDead: no process with the owner's pid and start time exists and the
	// heartbeat is stale.
	OwnerDead
)

func (s OwnerState) String() string {
	switch s {
	case OwnerAlive:
		return "alive"
	case OwnerUnconfirmed:
		return "unconfirmed"
	case OwnerHung:
		return "hung"
	case OwnerClosed:
		return "closed"
	case OwnerDead:
		return "dead"
	}
	return "OwnerState(" + strconv.Itoa(int(s)) + ")"
}

// Liveness is an assessment of a file's owner at one instant.
type Liveness struct {
	State           OwnerState
	PID             int           // owner pid from the header
	StartTime       uint64        // owner start time from the header (Linux: clock ticks since boot; darwin: µs since the epoch; 0: unknown)
	Running         bool          // a process with that pid and start time exists
	HeartbeatMillis int64         // last heartbeat (ms since the epoch), -1 once the owner closed the file
	HeartbeatAge    time.Duration // now - heartbeat (negative if in the future)
	Timeout         time.Duration // the liveness timeout applied
}

// describe says all of l, for error messages.
func (l Liveness) describe() string {
	return fmt.Sprintf("owner pid %d (start %d) %s: running=%t, heartbeat %d ms ago, timeout %s",
		l.PID, l.StartTime, l.State, l.Running, l.HeartbeatAge.Milliseconds(), l.Timeout)
}

// assess applies the liveness rules. A heartbeat further in the future than
// the timeout cannot come from a correct owner on this host and counts as
// stale.
func assess(pid, start, heartbeat int64, now time.Time, timeout time.Duration) Liveness {
	l := Liveness{
		PID:             int(pid),
		StartTime:       uint64(start),
		HeartbeatMillis: heartbeat,
		Timeout:         timeout,
	}
	l.Running = procinfo.Running(l.PID, l.StartTime)
	if heartbeat == ipcfile.HeartbeatClosed {
		l.State = OwnerClosed
		return l
	}
	// In milliseconds, saturating: the heartbeat is any int64 another
	// process stored, and a product or difference that wrapped around could
	// make a dead owner's heartbeat look fresh.
	age := subSaturating(now.UnixMilli(), heartbeat)
	l.HeartbeatAge = millisDuration(age)
	limit := timeout.Milliseconds()
	fresh := age <= limit && age >= -limit
	switch {
	case fresh && l.Running:
		l.State = OwnerAlive
	case fresh:
		l.State = OwnerUnconfirmed
	case l.Running:
		l.State = OwnerHung
	default:
		l.State = OwnerDead
	}
	return l
}

// subSaturating returns a - b, clamped to the int64 range.
func subSaturating(a, b int64) int64 {
	d := a - b
	if (b < 0 && d < a) || (b > 0 && d > a) { // wrapped around
		if b < 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return d
}

// millisDuration converts ms to a Duration, clamped to its range.
func millisDuration(ms int64) time.Duration {
	const maxMs = math.MaxInt64 / int64(time.Millisecond)
	switch {
	case ms > maxMs:
		return math.MaxInt64
	case ms < -maxMs:
		return math.MinInt64
	}
	return time.Duration(ms) * time.Millisecond
}

// Liveness assesses the owner of the file now: its process (pid and start
// time) and its heartbeat against timeout (0: the timeout in the header).
func (f *File) Liveness(now time.Time, timeout time.Duration) (Liveness, error) {
	hb, err := f.heartbeatMillis()
	if err != nil {
		return Liveness{}, err
	}
	if timeout <= 0 {
		timeout = f.livenessTimeout()
	}
	l := assess(f.hdr.OwnerPID, f.hdr.OwnerStartTime, hb, now, timeout)
	if l.State == OwnerUnconfirmed {
		l = l.settle(f.ownerLockFree())
	}
	return l, nil
}

// settle applies what the file's lock says: an owner whose process is not
// visible (OwnerUnconfirmed) and whose lock nobody holds has died, however
// fresh its last heartbeat. The owner holds the lock from creation until
// it closes the file and the kernel drops it when the owner's process
// dies, so a free lock is proof, where a missing pid alone is not (the
// owner may run in another pid namespace).
func (l Liveness) settle(lockFree bool) Liveness {
	if lockFree && l.State == OwnerUnconfirmed {
		l.State = OwnerDead
	}
	return l
}

// lockFree reports whether nobody holds the lock of the open file fd: it
// takes a shared lock and lets go of it at once (mmapfile.LockHeld), so
// two probers do not take each other for the owner. Never call it on the
// owner's own descriptor, whose lock it would drop.
func lockFree(fd int) bool {
	held, err := mmapfile.LockHeld(fd)
	return err == nil && !held
}

// ownerLockFree is lockFree on f's descriptor, holding a reference
// meanwhile; false for the owner's File.
func (f *File) ownerLockFree() bool {
	if f.owner || f.acquire() != nil {
		return false
	}
	defer f.release()
	return lockFree(f.fd)
}

// ownerExited reports whether the owner's process has provably finished
// with the file: nobody holds the file's lock, and no process with its
// pid and start time runs. The lock comes first: while the owner holds it
// the probe is one flock(2) that fails (no allocation); only a free lock
// costs a kill(2) and a read of /proc. Never true in the owner.
func (f *File) ownerExited() bool {
	if f.owner || !f.ownerLockFree() {
		return false
	}
	return !procinfo.Running(int(f.hdr.OwnerPID), uint64(f.hdr.OwnerStartTime))
}

// OwnerAlive reports whether the owner is OwnerAlive: its pid exists with the
// same start time (so a reused pid does not count) and its heartbeat is not
// older than the liveness timeout in the header.
func (f *File) ownerAlive(now time.Time) bool {
	l, err := f.Liveness(now, 0)
	return err == nil && l.State == OwnerAlive
}

// CheckOwner returns ErrOwnerDead (with the assessment) unless the owner's
// heartbeat is fresh (OwnerAlive or OwnerUnconfirmed). timeout 0 uses the header's.
func (f *File) checkOwner(now time.Time, timeout time.Duration) error {
	l, err := f.Liveness(now, timeout)
	if err != nil {
		return err
	}
	if l.State != OwnerAlive && l.State != OwnerUnconfirmed {
		return fmt.Errorf("%w: %s: %s", ErrOwnerDead, f.path, l.describe())
	}
	return nil
}

// selfStartTime is this process's start time, in procinfo.Info's units
// (0 where the platform cannot tell).
var selfStartTime = sync.OnceValue(func() uint64 {
	st, _, known := procinfo.Info(os.Getpid())
	if !known {
		return 0
	}
	return st
})

// RemoveIfStale removes the duty file at path if and only if its owner is
// provably finished with it: nobody holds its lock, and its owner closed it
// (OwnerClosed) or is OwnerDead (no process with its pid and start time,
// and a heartbeat older than the liveness timeout), or the file was left
// half-created (zero bytes, shorter than a header, an all-zero header, or
// version 0) and unmodified for longer than the timeout and than
// minCreationAge (1 s). The timeout is WithLivenessTimeout, else the
// header's, else 10 s (Aeron's). It returns nil once removed, and
// otherwise:
//
//   - ErrOwnerAlive when the file is locked (a live owner always holds its
//     lock), its owner is OwnerAlive, OwnerUnconfirmed or OwnerHung, it is
//     still being created, or the path was replaced meanwhile;
//   - ErrNotDutyFile, ErrVersion or ErrCorrupt for a file it cannot
//     interpret (never removed), ErrNotDutyFile also for a path that is not
//     a regular file: a directory, a socket, or a symbolic link (never
//     followed: neither the link nor its target is removed or judged);
//   - an error matching fs.ErrNotExist or fs.ErrPermission.
//
// The decision and the unlink happen under the file's lock after checking
// that path still names the inspected file, so two cleaners, or a cleaner
// and a new creator of the same name, cannot remove a live file.
func RemoveIfStale(path string, opts ...Option) error {
	return removeIfStale(path, newConfig(opts))
}

// minCreationAge is the least age at which RemoveIfStale treats a file
// that is still being created as abandoned, whatever the liveness timeout:
// a creator locks its new file right after creating it, and a cleaner with
// a short timeout must not remove the empty file in between. (File times
// are kernel-tick coarse, so a fresh file can look a few ms old.)
const minCreationAge = time.Second

func removeIfStale(path string, c config) error { return checkStale(path, c, true) }

// isStale reports, by the rules of RemoveIfStale, whether path names a
// file RemoveIfStale would remove, without removing it.
func isStale(path string, c config) bool { return checkStale(path, c, false) == nil }

// checkStale is RemoveIfStale, which removes a stale file when remove is
// set and otherwise only returns nil for it.
func checkStale(path string, c config, remove bool) error {
	// O_NOFOLLOW: a symbolic link is refused (ELOOP), never followed.
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		if nerr := notRegular("open without following links", path, false, err); nerr != nil {
			return nerr
		}
		return osError("open", path, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return osError("fstat", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return fmt.Errorf("%w: %s is %s, not a regular file", ErrNotDutyFile, path, fileType(uint32(st.Mode)))
	}
	// The owner holds LOCK_EX from creation until it closes: failing to get
	// it proves a live owner, whatever the header says.
	locked, err := mmapfile.TryLock(fd)
	// A prober (a sender asking whether its consumer lives, another
	// cleaner) holds a gone owner's lock for a few system calls: when the
	// header names an owner whose process does not run, try again briefly
	// before calling the file in use.
	for i := 0; err == nil && !locked && i < staleLockRetries && ipcfile.OwnerNotRunning(fd); i++ {
		time.Sleep(staleLockPause)
		locked, err = mmapfile.TryLock(fd)
	}
	if err != nil {
		return osError("lock", path, err)
	}
	if !locked {
		return fmt.Errorf("%w: %s: its owner holds the file's lock", ErrOwnerAlive, path)
	}
	now := c.now()
	buf := make([]byte, ipcfile.HeaderLength)
	n, err := ipcfile.PreadFull(fd, buf)
	if err != nil {
		return osError("read", path, err)
	}
	if n < ipcfile.HeaderLength && !ipcfile.AllZero(buf[:n]) {
		return fmt.Errorf("%w: %s: %d bytes that are not a duty header", ErrNotDutyFile, path, n)
	}
	if n < ipcfile.HeaderLength || ipcfile.Uninitialised(buf) {
		timeout := c.livenessTimeout
		if timeout <= 0 {
			timeout = defaultLivenessTimeout
		}
		// A creator has not locked its new file yet: whatever the timeout,
		// give it time to (see createLocked).
		timeout = max(timeout, minCreationAge)
		age := now.Sub(time.Unix(st.Mtim.Unix()))
		if age <= timeout {
			return fmt.Errorf("%w: %s is still being created (%d bytes, modified %s ago)", ErrOwnerAlive, path, n, age)
		}
		if !remove {
			return nil
		}
		return removeLocked(path, &st)
	}
	h, err := ipcfile.Read(path, buf, st.Size)
	if err != nil && !errors.Is(err, ErrTruncated) {
		return err
	}
	timeout := c.livenessTimeout
	if timeout <= 0 {
		timeout = time.Duration(h.LivenessTimeout) * time.Millisecond
	}
	hb := int64(binary.LittleEndian.Uint64(buf[ipcfile.HeartbeatOffset:]))
	// We hold the lock: the owner does not, so it has finished with the
	// file even when its last heartbeat is fresh.
	l := assess(h.OwnerPID, h.OwnerStartTime, hb, now, timeout).settle(true)
	if l.State != OwnerClosed && l.State != OwnerDead {
		return fmt.Errorf("%w: %s: %s", ErrOwnerAlive, path, l.describe())
	}
	if !remove {
		return nil
	}
	return removeLocked(path, &st)
}

// How long checkStale retries the lock of a file whose owner's process is
// gone (a prober holds it for a few system calls).
const (
	staleLockRetries = 20
	staleLockPause   = time.Millisecond
)

// removeLocked unlinks path if it still names the inode st describes. The
// caller holds that inode's lock, so no other cleaner is between its check
// and its unlink for the same inode.
func removeLocked(path string, st *unix.Stat_t) error {
	return removeLockedID(path, uint64(st.Dev), st.Ino) // Dev is int32 on darwin
}

// removeLockedID is removeLocked for the inode ino on device dev.
func removeLockedID(path string, dev, ino uint64) error {
	var cur unix.Stat_t
	if err := unix.Lstat(path, &cur); err != nil {
		return osError("stat", path, err)
	}
	if uint64(cur.Dev) != dev || cur.Ino != ino {
		return fmt.Errorf("%w: %s was replaced by another file", ErrOwnerAlive, path)
	}
	if err := unix.Unlink(path); err != nil {
		return osError("remove", path, err)
	}
	return nil
}

// Cleanup removes, with RemoveIfStale's rules, every stale duty file in dir
// ("" means DefaultDir()), including temporary files of creators that died
// before linking them. It returns the names it removed. Files that are not
// stale, not duty files, or of an unknown version are skipped silently, and
// so is everything that is not a regular file: directories, and symbolic
// links, which are never followed (see RemoveIfStale); other failures are
// joined into the error. A missing dir is not an error.
func Cleanup(dir string, opts ...Option) ([]string, error) {
	c := newConfig(opts)
	if dir == "" {
		dir = DefaultDir()
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, osError("read directory", dir, err)
	}
	var removed []string
	var errs []error
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		err := removeIfStale(filepath.Join(dir, e.Name()), c)
		switch {
		case err == nil:
			removed = append(removed, e.Name())
		case errors.Is(err, ErrOwnerAlive), errors.Is(err, ErrNotDutyFile), errors.Is(err, ErrVersion),
			errors.Is(err, ErrCorrupt), errors.Is(err, fs.ErrNotExist):
		default:
			errs = append(errs, err)
		}
	}
	return removed, errors.Join(errs...)
}
