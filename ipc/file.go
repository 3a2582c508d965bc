package ipc

import (
	"fmt"
	"github.com/dutyrt/duty/internal/ipcfile"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/dutyrt/duty/internal/atomicbuf"

	"github.com/dutyrt/duty/internal/mmapfile"
)

// Kind says what a file's sections hold. It is stored in the header so that
// opening a file of the wrong kind is an error, not a misreading.
type Kind int32

const (
	// KindRing is a file whose single section is a ringbuf many-to-one ring
	// (capacity + ringbuf.TrailerLength bytes).
	KindRing Kind = 1
	// KindPublication is an IPC publication: log, metadata and subscriber
	// table (package ipc/publication, its layout.go).
	KindPublication Kind = 2
	// KindCounters is a counters file (countersfile.go).
	KindCounters Kind = 3
	// KindErrorLog is a distinct error log file (errlogfile.go): one
	// section holding an errlog buffer.
	KindErrorLog Kind = 4
	// KindHistograms is a latency histograms file (histogramfile.go): one
	// section holding histogram regions one after another.
	KindHistograms Kind = 5
	// kindUserMin is the first kind free for applications.
	kindUserMin Kind = 1 << 16
)

// File is a mapped duty file: a validated header and its sections, shared
// with other processes.
//
// A File is reference counted: every opener returns it holding one
// reference, which Close releases, and the package's own cold paths
// (Heartbeat, Guard, Liveness) hold one of their own while they touch the
// mapping. The mapping is unmapped (and the descriptor closed) when the
// count drops to zero, never before. Methods of a File whose count has
// dropped to zero return ErrClosed; a slice obtained earlier and used after
// that point faults (it is unmapped memory), as any use-after-free would:
// close a file only once no goroutine uses its sections or a ring over it.
//
// All methods are safe for concurrent use. Heartbeat and Remove belong to
// the owner (the process that created the file).
type File struct {
	path  string
	fd    int
	data  []byte // the whole mapping, len == hdr.fileLength
	hdr   ipcfile.Header
	owner bool
	dev   uint64
	ino   uint64

	version   *atomic.Int32
	heartbeat *atomic.Int64

	refs   atomic.Int64
	closed atomic.Bool
}

func newFile(path string, fd int, data []byte, hdr ipcfile.Header, owner bool, st *unix.Stat_t) *File {
	ab, _ := atomicbuf.New(data) // page-aligned mapping
	f := &File{
		path:      path,
		fd:        fd,
		data:      data,
		hdr:       hdr,
		owner:     owner,
		dev:       uint64(st.Dev), // int32 on darwin
		ino:       st.Ino,
		version:   ab.Int32At(ipcfile.VersionOffset),
		heartbeat: ab.Int64At(ipcfile.HeartbeatOffset),
	}
	f.refs.Store(1)
	return f
}

// Path returns the path the file was created or opened at.
func (f *File) Path() string { return f.path }

// Kind returns the file's kind.
func (f *File) Kind() Kind { return Kind(f.hdr.Kind) }

// Version returns the file's layout version.
func (f *File) layoutVersion() int32 { return f.hdr.Version }

// Created returns the creation time in the header (ms precision): with the
// path's inode, what tells a file from another one created later at the
// same path.
func (f *File) Created() time.Time { return time.UnixMilli(f.hdr.Created) }

// Len returns the file's length: header and sections, as mapped.
func (f *File) Len() int64 { return f.hdr.FileLength }

// IsOwner reports whether this File created the file.
func (f *File) IsOwner() bool { return f.owner }

// sectioncount returns the number of sections.
func (f *File) sectionCount() int { return len(f.hdr.Sections) }

// livenesstimeout returns the owner liveness timeout stored in the header.
func (f *File) livenessTimeout() time.Duration {
	return time.Duration(f.hdr.LivenessTimeout) * time.Millisecond
}

// acquire takes a reference to the mapping. It fails with ErrClosed once
// the last reference has been released (the mapping is gone).
func (f *File) acquire() error {
	for {
		n := f.refs.Load()
		if n <= 0 {
			return fmt.Errorf("%w: %s", ErrClosed, f.path)
		}
		if f.refs.CompareAndSwap(n, n+1) {
			return nil
		}
	}
}

// release gives back a reference taken by acquire. The last release unmaps
// the file and closes its descriptor. A release without a reference to give
// back returns ErrClosed.
func (f *File) release() error {
	for {
		n := f.refs.Load()
		if n <= 0 {
			return fmt.Errorf("%w: %s: release without a reference", ErrClosed, f.path)
		}
		if f.refs.CompareAndSwap(n, n-1) {
			if n == 1 {
				return f.unmap()
			}
			return nil
		}
	}
}

// refCount returns the number of references held (0 once unmapped).
func (f *File) refCount() int64 { return max(f.refs.Load(), 0) }

// Close releases the reference the opener returned. It is idempotent:
// later calls return nil and release nothing. When the owner closes, it
// first stores the closed mark (-1) in the heartbeat word and drops its lock on the
// file, so other processes see at once that the owner has finished with it
// (RemoveIfStale may then remove it); the mapping itself stays until the
// last reference is released.
func (f *File) Close() error {
	if !f.closed.CompareAndSwap(false, true) {
		return nil
	}
	var markErr error
	if f.owner {
		// A reference of our own keeps the mapping and the descriptor from
		// going away (or being reused) under the store and the unlock, even
		// if a caller has already released more than it acquired. A
		// truncated file would fault on the store: guard it.
		if err := f.acquire(); err != nil {
			return err
		}
		markErr = f.guarded(func() error {
			f.heartbeat.Store(ipcfile.HeartbeatClosed)
			return nil
		})
		_ = mmapfile.Unlock(f.fd)
		if err := f.release(); err != nil {
			return err
		}
	}
	if err := f.release(); err != nil {
		return err
	}
	return markErr
}

func (f *File) unmap() error {
	err := mmapfile.Unmap(f.data)
	if cerr := unix.Close(f.fd); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("ipc: unmap %s: %w", f.path, err)
	}
	return nil
}

// live reports ErrClosed when the mapping is gone.
func (f *File) live() error {
	if f.refs.Load() <= 0 {
		return fmt.Errorf("%w: %s", ErrClosed, f.path)
	}
	return nil
}

// Section returns section i, aliasing the mapping. The slice is valid until
// the File is closed; Section returns ErrClosed after the last release.
func (f *File) Section(i int) ([]byte, error) {
	if err := f.live(); err != nil {
		return nil, err
	}
	if i < 0 || i >= len(f.hdr.Sections) {
		return nil, fmt.Errorf("%w: section %d of %d", ErrArgument, i, len(f.hdr.Sections))
	}
	s := f.hdr.Sections[i]
	return f.data[s.Offset : s.Offset+s.Length : s.Offset+s.Length], nil
}

// SpareSlot returns spare slot i of the header (ipcfile.SpareSlotLength bytes,
// 8-byte aligned, zero at creation), aliasing the mapping, for words that
// layers built on this package keep per file (a closed state, consumer
// liveness). Access its words only with sync/atomic (internal/atomicbuf).
// Lifetime as for Section.
func (f *File) spareSlotAt(i int) ([]byte, error) {
	if err := f.live(); err != nil {
		return nil, err
	}
	if i < 0 || i >= ipcfile.SpareSlotCount {
		return nil, fmt.Errorf("%w: spare slot %d of %d", ErrArgument, i, ipcfile.SpareSlotCount)
	}
	o := ipcfile.SpareSlot(i)
	return f.data[o : o+ipcfile.SpareSlotLength : o+ipcfile.SpareSlotLength], nil
}

// Heartbeat stores nowMillis (milliseconds since the Unix epoch: it is
// compared across processes) as the owner's heartbeat. The owner calls it
// from its duty cycle more often than the liveness timeout; the package
// never starts a goroutine to do it. It first checks the file's size with
// fstat (one system call: a cheap truncation check, ErrTruncated) and does
// the store under Guard. Owner only (ErrNotOwner); after Close it returns
// an error wrapping ErrClosed and leaves the closed mark in place.
//
// Ordering: a compare-and-swap of the word (sequentially consistent, so at
// least a release); readers synchronise on nothing else, they only compare
// its value with their clock.
func (f *File) Heartbeat(nowMillis int64) error {
	if !f.owner {
		return fmt.Errorf("%w: %s: heartbeat", ErrNotOwner, f.path)
	}
	if f.closed.Load() {
		return fmt.Errorf("%w: %s: heartbeat after Close", ErrClosed, f.path)
	}
	if err := f.acquire(); err != nil {
		return err
	}
	defer f.release()
	if err := f.checkSize(); err != nil {
		return err
	}
	return f.guarded(func() error {
		// A compare-and-swap, not a store: Close's ipcfile.HeartbeatClosed must
		// stay, even against a Heartbeat that passed the closed check
		// just before Close (a later heartbeat would make the closed
		// owner look alive, then hung, to every other process).
		for {
			old := f.heartbeat.Load()
			if old == ipcfile.HeartbeatClosed {
				return fmt.Errorf("%w: %s: heartbeat after Close", ErrClosed, f.path)
			}
			if f.heartbeat.CompareAndSwap(old, nowMillis) {
				return nil
			}
		}
	})
}

// heartbeatmillis returns the owner's last heartbeat (ms since the Unix
// epoch), or ipcfile.HeartbeatClosed once the owner closed the file.
func (f *File) heartbeatMillis() (int64, error) {
	if err := f.acquire(); err != nil {
		return 0, err
	}
	defer f.release()
	var hb int64
	err := f.guarded(func() error {
		hb = f.heartbeat.Load()
		return nil
	})
	return hb, err
}

// checkSize compares the file's current size (fstat) with the mapping and
// returns ErrTruncated if it shrank: touching the missing pages would raise
// SIGBUS. Call it on cold paths (the owner's Heartbeat does) to detect a
// truncated file before the hot path faults on it.
func (f *File) checkSize() error {
	if err := f.acquire(); err != nil { // the descriptor stays ours meanwhile
		return err
	}
	defer f.release()
	var st unix.Stat_t
	if err := unix.Fstat(f.fd, &st); err != nil {
		return fmt.Errorf("ipc: fstat %s: %w", f.path, err)
	}
	if st.Size < f.hdr.FileLength {
		return fmt.Errorf("%w: %s: %d bytes, mapped %d", ErrTruncated, f.path, st.Size, f.hdr.FileLength)
	}
	return nil
}

// Guard runs fn on the calling goroutine with debug.SetPanicOnFault(true),
// holding a reference to the mapping, so that a memory fault inside the
// mapping (SIGBUS on a page of a truncated file, SIGSEGV on a store into a
// read-only mapping) is returned as an error matching ErrFault, and also
// ErrTruncated when fstat then finds the file shorter than the mapping. fn's
// own error is returned as is. A fault outside the mapping is not this
// file's business and panics on as it would have, as does any other panic
// (a nil dereference included). Only faults on the calling goroutine are
// caught, and not those inside the runtime or where Go cannot unwind the
// stack. It is for cold paths and for a consumer's whole poll loop: it costs
// a deferred call, so ring hot paths go without (see the package
// documentation). A nil fn is ErrArgument.
func (f *File) Guard(fn func() error) error {
	if fn == nil {
		return fmt.Errorf("%w: %s: Guard of a nil function", ErrArgument, f.path)
	}
	if err := f.acquire(); err != nil {
		return err
	}
	defer f.release()
	return f.guarded(fn)
}

// guarded is Guard for callers that already hold a reference.
func (f *File) guarded(fn func() error) error {
	base := uintptr(unsafe.Pointer(unsafe.SliceData(f.data)))
	end := base + uintptr(len(f.data))
	return guard(fn, func(addr uintptr) (*faultError, bool) {
		if addr < base || addr >= end {
			return nil, false
		}
		fe := &faultError{Addr: addr, Size: -1, Mapped: f.hdr.FileLength}
		var st unix.Stat_t
		if unix.Fstat(f.fd, &st) == nil {
			fe.Size = st.Size
			fe.Truncated = st.Size < f.hdr.FileLength
		}
		return fe, true
	})
}

// Remove removes the file's name from its directory, if the path still
// names this file; existing mappings (this one and other processes') stay
// valid until released. Owner only (ErrNotOwner): another process uses
// RemoveIfStale, which never removes a live owner's file. Call it before
// Close, to leave nothing behind.
func (f *File) Remove() error {
	if !f.owner {
		return fmt.Errorf("%w: %s: remove", ErrNotOwner, f.path)
	}
	if err := f.live(); err != nil {
		return err
	}
	return removeLockedID(f.path, f.dev, f.ino)
}

// replaced reports whether f's path now names another file than f's (a
// file created anew at the same path). A missing path is not a
// replacement: the name may be between a removal and its next creation.
func (f *File) replaced() bool {
	var st unix.Stat_t
	if err := unix.Lstat(f.path, &st); err != nil {
		return false
	}
	return uint64(st.Dev) != f.dev || st.Ino != f.ino // Dev is int32 on darwin
}
