package ipcfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/dutyrt/duty/internal/procinfo"
	"github.com/dutyrt/duty/internal/sentinel"
)

// The sentinels of a file's bytes; package ipc exports them (the same
// values) and says what each reports.
var (
	ErrNotDutyFile = errors.New("ipc: not a duty file")
	ErrVersion     = errors.New("ipc: unsupported layout version")
	ErrTruncated   = errors.New("ipc: file truncated")
	ErrNotReady    = errors.New("ipc: file not ready")
	ErrCorrupt     = sentinel.Corrupt("ipc: corrupt header")
	ErrArgument    = errors.New("ipc: invalid argument")
)

// ErrNotInitialised is Read's "version 0" result: Open waits on it and
// turns it into ErrNotReady when its context ends.
var ErrNotInitialised = fmt.Errorf("%w: version 0 (still being created)", ErrNotReady)

// VersionError reports a layout version this package cannot read. It
// matches ErrVersion with errors.Is.
type VersionError struct {
	Path      string
	Found     int32 // the file's version
	Supported int32 // LayoutVersion
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("ipc: %s: layout version %d, this build reads up to %d", e.Path, e.Found, e.Supported)
}

// Is makes errors.Is(err, ErrVersion) true.
func (e *VersionError) Is(target error) bool { return target == ErrVersion }

// Section is one validated entry of the section table.
type Section struct {
	Offset, Length int64
}

// Header is a validated copy of a file's immutable header fields. Bounds
// are always taken from this copy, never re-read from the shared mapping,
// so a peer that scribbles over the header after Open cannot send this
// process out of the mapping.
type Header struct {
	Version         int32
	Kind            int32
	FileLength      int64
	OwnerPID        int64
	OwnerStartTime  int64
	Created         int64
	LivenessTimeout int64 // ms
	Sections        []Section
}

// MaxFileLength bounds a declared length (1 TiB): larger values are corrupt.
const MaxFileLength = 1 << 40

// MaxLivenessMillis is the longest liveness timeout a header may hold: the
// most a time.Duration (what ipc.WithLivenessTimeout takes) can express in
// milliseconds. A larger value comes from no creator: it is corruption,
// not a timeout that would wrap negative and make a live owner look hung.
const MaxLivenessMillis = math.MaxInt64 / int64(time.Millisecond)

// MagicWord is Magic as the little-endian word stored at MagicOffset.
var MagicWord = binary.LittleEndian.Uint64([]byte(Magic))

// Read decodes and validates a header from b (at least HeaderLength
// bytes read from the file: a copy, not the mapping). size is the file's
// current size. It checks, in order: magic, version, header fields, section
// table, and the declared length against size.
func Read(path string, b []byte, size int64) (Header, error) {
	le := binary.LittleEndian
	var h Header
	if string(b[MagicOffset:MagicOffset+len(Magic)]) != Magic {
		return h, fmt.Errorf("%w: %s: magic %q", ErrNotDutyFile, path, b[MagicOffset:MagicOffset+len(Magic)])
	}
	h.Version = int32(le.Uint32(b[VersionOffset:]))
	if h.Version == 0 {
		return h, ErrNotInitialised
	}
	if h.Version < 0 || h.Version > LayoutVersion {
		return h, &VersionError{Path: path, Found: h.Version, Supported: LayoutVersion}
	}
	h.Kind = int32(le.Uint32(b[KindOffset:]))
	hl := int32(le.Uint32(b[HeaderLengthOffset:]))
	count := int32(le.Uint32(b[SectionCountOffset:]))
	align := int32(le.Uint32(b[SectionAlignmentOffset:]))
	h.FileLength = int64(le.Uint64(b[FileLengthOffset:]))
	h.OwnerPID = int64(le.Uint64(b[OwnerPIDOffset:]))
	h.OwnerStartTime = int64(le.Uint64(b[OwnerStartTimeOffset:]))
	h.Created = int64(le.Uint64(b[CreatedOffset:]))
	h.LivenessTimeout = int64(le.Uint64(b[LivenessTimeoutOffset:]))
	switch {
	case h.Kind < 1:
		return h, fmt.Errorf("%w: %s: kind %d", ErrCorrupt, path, h.Kind)
	case hl != HeaderLength:
		return h, fmt.Errorf("%w: %s: header length %d, want %d", ErrCorrupt, path, hl, HeaderLength)
	case align != SectionAlignment:
		return h, fmt.Errorf("%w: %s: section alignment %d, want %d", ErrCorrupt, path, align, SectionAlignment)
	case count < 1 || count > MaxSections:
		return h, fmt.Errorf("%w: %s: %d sections, want 1 to %d", ErrCorrupt, path, count, MaxSections)
	case h.FileLength < HeaderLength || h.FileLength%SectionAlignment != 0 || h.FileLength > MaxFileLength:
		return h, fmt.Errorf("%w: %s: declared file length %d", ErrCorrupt, path, h.FileLength)
	case h.LivenessTimeout <= 0 || h.LivenessTimeout > MaxLivenessMillis:
		return h, fmt.Errorf("%w: %s: liveness timeout %d ms", ErrCorrupt, path, h.LivenessTimeout)
	}
	h.Sections = make([]Section, count)
	next := int64(HeaderLength)
	for i := range h.Sections {
		e := SectionEntry(i)
		s := Section{
			Offset: int64(le.Uint64(b[e+SectionOffsetField:])),
			Length: int64(le.Uint64(b[e+SectionLengthField:])),
		}
		// Sections are in order, aligned, non-empty, inside the declared
		// length; each comparison is written so it cannot overflow.
		if s.Offset < next || s.Offset%SectionAlignment != 0 || s.Length <= 0 ||
			s.Offset > h.FileLength || s.Length > h.FileLength-s.Offset {
			return h, fmt.Errorf("%w: %s: section %d at %d, %d bytes, file length %d", ErrCorrupt, path, i, s.Offset, s.Length, h.FileLength)
		}
		h.Sections[i] = s
		next = s.Offset + s.Length
	}
	if h.FileLength > size {
		return h, fmt.Errorf("%w: %s: %d bytes, header declares %d", ErrTruncated, path, size, h.FileLength)
	}
	return h, nil
}

// Layout computes the header fields that depend only on the kind and the
// sections' lengths.
func Layout(kind int32, sections []int) (Header, error) {
	if len(sections) < 1 || len(sections) > MaxSections {
		return Header{}, fmt.Errorf("%w: %d sections, want 1 to %d", ErrArgument, len(sections), MaxSections)
	}
	h := Header{Version: LayoutVersion, Kind: kind, Sections: make([]Section, len(sections))}
	off := int64(HeaderLength)
	for i, n := range sections {
		if n <= 0 || int64(n) > MaxFileLength-off {
			return Header{}, fmt.Errorf("%w: section %d of %d bytes", ErrArgument, i, n)
		}
		h.Sections[i] = Section{Offset: off, Length: int64(n)}
		off = AlignUp(off+int64(n), SectionAlignment)
	}
	if off > MaxFileLength || off != int64(int(off)) {
		return Header{}, fmt.Errorf("%w: file of %d bytes", ErrArgument, off)
	}
	h.FileLength = off
	return h, nil
}

// Write initialises a zero header: the magic first (one atomic 8-byte
// store, so nobody sees it torn), then the fields with plain stores into
// memory nobody reads yet (a temporary file, or a file whose readers wait
// for the version), the heartbeat, and last the version with sync/atomic
// (sequentially consistent, so at least a release): a process that loads
// a non-zero version sees every header field stored before it. A header is
// therefore all zero, or has the magic, at every instant of its creation:
// anything else is not a duty file.
func Write(b []byte, h Header) {
	le := binary.LittleEndian
	(*atomic.Uint64)(unsafe.Pointer(&b[MagicOffset])).Store(MagicWord)
	le.PutUint32(b[KindOffset:], uint32(h.Kind))
	le.PutUint32(b[HeaderLengthOffset:], HeaderLength)
	le.PutUint32(b[SectionCountOffset:], uint32(len(h.Sections)))
	le.PutUint32(b[SectionAlignmentOffset:], SectionAlignment)
	le.PutUint64(b[FileLengthOffset:], uint64(h.FileLength))
	le.PutUint64(b[OwnerPIDOffset:], uint64(h.OwnerPID))
	le.PutUint64(b[OwnerStartTimeOffset:], uint64(h.OwnerStartTime))
	le.PutUint64(b[CreatedOffset:], uint64(h.Created))
	le.PutUint64(b[LivenessTimeoutOffset:], uint64(h.LivenessTimeout))
	for i, s := range h.Sections {
		e := SectionEntry(i)
		le.PutUint64(b[e+SectionOffsetField:], uint64(s.Offset))
		le.PutUint64(b[e+SectionLengthField:], uint64(s.Length))
	}
	(*atomic.Int64)(unsafe.Pointer(&b[HeartbeatOffset])).Store(h.Created)
	(*atomic.Int32)(unsafe.Pointer(&b[VersionOffset])).Store(h.Version)
}

// Uninitialised reports a header that a creator has not finished: all
// zero, or the magic with version 0 (Write stores the magic first and the
// version last).
func Uninitialised(b []byte) bool {
	if binary.LittleEndian.Uint32(b[VersionOffset:]) != 0 {
		return false
	}
	return string(b[MagicOffset:MagicOffset+len(Magic)]) == Magic || AllZero(b[:HeaderLength])
}

// AllZero reports whether every byte of b is zero.
func AllZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// OwnerNotRunning reads the header of the open duty file fd and reports
// whether it names an owner whose process does not run (false for
// anything that is not an initialised duty header).
func OwnerNotRunning(fd int) bool {
	buf := make([]byte, HeaderLength)
	if n, err := PreadFull(fd, buf); err != nil || n < HeaderLength || Uninitialised(buf) ||
		string(buf[MagicOffset:MagicOffset+len(Magic)]) != Magic {
		return false
	}
	pid := int64(binary.LittleEndian.Uint64(buf[OwnerPIDOffset:]))
	start := binary.LittleEndian.Uint64(buf[OwnerStartTimeOffset:])
	return pid > 0 && pid <= math.MaxInt32 && !procinfo.Running(int(pid), start)
}

// PreadFull reads len(b) bytes of fd from offset 0, or fewer at end of
// file.
func PreadFull(fd int, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := unix.Pread(fd, b[n:], int64(n))
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return n, err
		}
		if m == 0 {
			break
		}
		n += m
	}
	return n, nil
}
