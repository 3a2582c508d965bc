package journalfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/dutyrt/duty/internal/atomicbuf"

	"github.com/dutyrt/duty/internal/mmapfile"
)

// segmentSuffix ends every segment file's name.
const segmentSuffix = ".seg"

// SegmentName is the file name of the segment starting at position start:
// zero-padded, so that a directory listing sorts by position.
func SegmentName(start int64) string { return fmt.Sprintf("%020d%s", start, segmentSuffix) }

// ParseSegmentName returns the start position a segment file name encodes.
func ParseSegmentName(name string) (int64, bool) {
	if len(name) != 20+len(segmentSuffix) || filepath.Ext(name) != segmentSuffix {
		return 0, false
	}
	v, err := strconv.ParseInt(name[:20], 10, 64)
	return v, err == nil && v >= 0
}

// Segment is one mapped segment file: the mapped file.
//
// A segment is reference counted. The journal's table holds one reference
// while the segment is in the table; a reader (a Tailer, the flusher, the
// writer) holds one while it reads or writes it. The last release unmaps.
// Journal.Close drops the table's references; if holders remain after the
// grace interval (the forced cleanup after a first shutdown time of
// RocketMQ's mapped files), ForceRelease revokes the mapping: its pages
// become anonymous zero pages (revokeMapping), released is set, and a
// holder that reads on finds released and returns ErrReleased. It never
// faults.
type Segment struct {
	Start int64  // position of the segment's first byte
	Path  string // file path
	dir   string // its directory, and its final path while prepared
	final string
	Data  []byte // the whole mapping; len == segment size
	words unsafe.Pointer
	// file is the mapped file's identity (os.SameFile) where it was
	// opened by name (OpenSegment): a reader checks it against the file
	// under that name, which a recovering writer may have replaced.
	File os.FileInfo

	Refs     atomic.Int64
	Released atomic.Bool // the mapping was revoked under holders
	Deleted  atomic.Bool // retention removed the file

	// unsyncedName: renamed into place, directory not synced since;
	// unsyncedHeader: prepared without a sync of its header and
	// allocation (PrepareSegment), not synced since.
	unsyncedName   atomic.Bool
	unsyncedHeader atomic.Bool
	// HeaderRebuilt: OpenSegment found the header all zeros and wrote it
	// again from the file's name and size.
	HeaderRebuilt bool

	// created is the header's creation time (ns), the segment's age for
	// retention once the next segment exists.
	Created int64

	mu       sync.Mutex // guards unmapped and revoked
	unmapped bool
	revoked  bool
}

// length returns the word at off as an acquire load. It pairs with the
// writer's release store of the length word in commit: a reader that sees
// a non-zero length sees every byte of the record before it (valid on
// arm64: sync/atomic loads are acquire, stores release).
func (s *Segment) Length(off int64) int32 {
	return (*atomic.Int32)(unsafe.Add(s.words, off)).Load()
}

// At returns the address of the mapping's byte at off, for the writer's
// stores into a slot it has checked lies inside the segment (off plus the
// slot's length at most the segment size): no bounds check per store.
func (s *Segment) At(off int64) unsafe.Pointer { return unsafe.Add(s.words, off) }

// StoreLength publishes a record or marker at off: a release store
// (atomicbuf.StoreRelease32, a plain MOV on amd64), enough because readers
// synchronise through this word alone.
func (s *Segment) StoreLength(off int64, v int32) {
	atomicbuf.StoreRelease32((*atomic.Int32)(unsafe.Add(s.words, off)), v)
}

// hold takes a reference, failing once the segment is shut down or
// released.
func (s *Segment) Hold() error {
	for {
		n := s.Refs.Load()
		if n <= 0 || s.Released.Load() {
			return fmt.Errorf("%w: %s", ErrReleased, s.Path)
		}
		if s.Refs.CompareAndSwap(n, n+1) {
			return nil
		}
	}
}

// release gives back a reference; the last one unmaps (the file's pages,
// or the zero pages ForceRelease put in their place).
func (s *Segment) Release() error {
	n := s.Refs.Add(-1)
	if n < 0 {
		return fmt.Errorf("%w: %s: release without a reference", ErrReleased, s.Path)
	}
	if n > 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.unmapped {
		return nil
	}
	s.unmapped = true
	return mmapfile.Unmap(s.Data)
}

// ForceRelease revokes the mapping under its holders: they read zero
// pages from then on, and find released set when they check after reading.
// The address range stays reserved until the last holder releases.
func (s *Segment) ForceRelease() error {
	s.Released.Store(true)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.unmapped || s.revoked {
		return nil
	}
	s.revoked = true
	if err := mmapfile.Revoke(s.Data); err != nil {
		return fmt.Errorf("journal: revoke %s: %w", s.Path, err)
	}
	return nil
}

// OpenSegment maps an existing segment file and checks its header. size is
// the journal's segment size (0: take it from the header).
func OpenSegment(path string, start, size int64, writable bool) (*Segment, error) {
	flag := os.O_RDONLY
	if writable {
		flag = os.O_RDWR
	}
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		return nil, fmt.Errorf("journal: open segment: %w", err)
	}
	defer f.Close() // the mapping outlives the descriptor
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("journal: stat segment: %w", err)
	}
	var hdr [SegmentHeaderLength]byte
	if _, err := f.ReadAt(hdr[:], 0); err != nil {
		return nil, fmt.Errorf("%w: segment %s: header: %v", ErrCorrupt, path, err)
	}
	rebuilt := false
	if hdr == ([SegmentHeaderLength]byte{}) && writable {
		// Never written back: a segment prepared without a sync whose
		// name reached the disk before its header (PrepareSegment). The
		// header holds nothing the name and the file's size do not,
		// but the creation time: the file's last change stands in.
		if err := CheckSegmentSize(fi.Size()); err != nil || start&(fi.Size()-1) != 0 || size != 0 && fi.Size() != size {
			return nil, fmt.Errorf("%w: segment %s: header never written and the file's size %d is not the segment's", ErrCorrupt, path, fi.Size())
		}
		putSegmentHeader(hdr[:], fi.Size(), start, fi.ModTime().UnixNano())
		if _, err := f.WriteAt(hdr[:], 0); err != nil {
			return nil, fmt.Errorf("journal: segment %s: rebuild header: %w", path, err)
		}
		if err := SyncFile(f); err != nil {
			return nil, fmt.Errorf("journal: segment %s: rebuild header: %w", path, err)
		}
		rebuilt = true
	} else if hdr == ([SegmentHeaderLength]byte{}) {
		return nil, fmt.Errorf("%w: segment %s: header never written (a machine crash before its write-back): the writer's next Open rebuilds it", ErrCorrupt, path)
	}
	hsize, created, err := checkSegmentHeader(hdr[:], start, path)
	if err != nil {
		return nil, err
	}
	if size != 0 && hsize != size {
		return nil, fmt.Errorf("%w: segment %s: size %d, the journal's is %d", ErrCorrupt, path, hsize, size)
	}
	if fi.Size() != hsize {
		return nil, fmt.Errorf("%w: segment %s: file is %d bytes, header says %d", ErrCorrupt, path, fi.Size(), hsize)
	}
	data, err := mapFile(f, hsize, writable)
	if err != nil {
		return nil, err
	}
	s := newSegment(path, start, created, data)
	s.File = fi
	s.HeaderRebuilt = rebuilt
	return s, nil
}

func newSegment(path string, start, created int64, data []byte) *Segment {
	s := &Segment{Start: start, Path: path, Data: data, Created: created, words: unsafe.Pointer(unsafe.SliceData(data))}
	s.Refs.Store(1)
	return s
}

// checkSegmentHeader validates a segment header read from a file whose
// name says start; it returns the segment size and creation time.
func checkSegmentHeader(b []byte, start int64, path string) (size, created int64, err error) {
	le := binary.LittleEndian
	if string(b[SegMagicOffset:SegMagicOffset+8]) != SegMagic {
		return 0, 0, fmt.Errorf("%w: segment %s: bad magic %q", ErrCorrupt, path, b[:8])
	}
	if v := le.Uint32(b[SegVersionOffset:]); v != Version {
		return 0, 0, fmt.Errorf("%w: segment %s: version %d, want %d", ErrVersion, path, v, Version)
	}
	if got, want := crc32.Checksum(b[:SegCRCOffset], Castagnoli), le.Uint32(b[SegCRCOffset:]); got != want {
		return 0, 0, fmt.Errorf("%w: segment %s: header CRC %#08x, header says %#08x", ErrCorrupt, path, got, want)
	}
	size = int64(le.Uint64(b[SegSizeOffset:]))
	if err := CheckSegmentSize(size); err != nil || le.Uint32(b[segHdrLenOffset:]) != SegmentHeaderLength {
		return 0, 0, fmt.Errorf("%w: segment %s: size %d, header length %d", ErrCorrupt, path, size, le.Uint32(b[segHdrLenOffset:]))
	}
	if s := int64(le.Uint64(b[SegStartOffset:])); s != start || start&(size-1) != 0 {
		return 0, 0, fmt.Errorf("%w: segment %s: header start %d, name says %d", ErrCorrupt, path, s, start)
	}
	return size, int64(le.Uint64(b[SegCreatedOffset:])), nil
}

func CheckSegmentSize(size int64) error {
	if size < MinSegmentSize || size > maxSegmentSize || size&(size-1) != 0 {
		return fmt.Errorf("%w: segment size %d: a power of two from %d to %d", ErrArgument, size, MinSegmentSize, maxSegmentSize)
	}
	return nil
}

// CreateSegment creates, preallocates and maps a new segment (see
// PrepareSegment), syncs it, renames it into place and syncs the
// directory.
func CreateSegment(dir string, start, size, created int64) (*Segment, error) {
	s, err := PrepareSegment(dir, start, size, created, true)
	if err != nil {
		return nil, err
	}
	if err := s.Publish(created); err != nil {
		_ = s.Discard()
		return nil, err
	}
	if err := s.SyncName(); err != nil {
		return nil, err
	}
	return s, nil
}

// PrepareSegment creates a complete segment under a temporary name: the
// file preallocated (a full disk is an error here, not a SIGBUS at a later
// store), its header written, the file mapped. Nobody else opens it until
// Publish renames it into place: a segment file under its final name is
// always complete in the page cache. With sync, the header and the
// allocation are synced here, before the name exists; without, SyncName
// syncs them before the directory, the first time anything of the
// segment is to be durable. A sync while the writer appends makes the
// writer's page faults wait for the file system's journal commit it
// forces, so the segment a Flusher prepares ahead of an appending writer
// is not synced; after a machine crash its name may then be on disk
// without its header, which OpenSegment rebuilds.
func PrepareSegment(dir string, start, size, created int64, sync bool) (*Segment, error) {
	path := filepath.Join(dir, SegmentName(start))
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("journal: create segment: %w", err)
	}
	defer f.Close()
	fail := func(err error) (*Segment, error) {
		_ = os.Remove(tmp)
		return nil, fmt.Errorf("journal: create segment %s: %w", path, err)
	}
	if err := mmapfile.Preallocate(int(f.Fd()), size, mmapfile.Fallocate); err != nil {
		return fail(err)
	}
	var hdr [SegmentHeaderLength]byte
	putSegmentHeader(hdr[:], size, start, created)
	if _, err := f.WriteAt(hdr[:], 0); err != nil {
		return fail(err)
	}
	if sync {
		if err := SyncFile(f); err != nil {
			return fail(err)
		}
	}
	data, err := mapFile(f, size, true)
	if err != nil {
		return fail(err)
	}
	s := newSegment(tmp, start, created, data)
	s.dir, s.final = dir, path
	s.unsyncedHeader.Store(!sync)
	return s, nil
}

// publish stamps a prepared segment's header with its creation time (the
// moment it becomes the writer's: retention's age) and renames it into
// place. Its name is durable only after SyncName.
func (s *Segment) Publish(created int64) error {
	putSegmentHeader(s.Data[:SegmentHeaderLength], int64(len(s.Data)), s.Start, created)
	s.Created = created
	if _, err := os.Stat(s.final); err == nil {
		return fmt.Errorf("journal: create segment %s: %w: segment exists", s.final, ErrArgument)
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("journal: create segment: %w", err)
	}
	if err := os.Rename(s.Path, s.final); err != nil {
		return fmt.Errorf("journal: create segment: %w", err)
	}
	s.Path = s.final
	s.unsyncedName.Store(true)
	return nil
}

// SyncName makes a published segment's name durable (fsync of the
// directory), once. Flush calls it before it syncs any byte of the
// segment, so a durable record is never in a file whose name could be
// lost.
func (s *Segment) SyncName() error {
	if s.unsyncedHeader.Load() {
		// The header's page, synced through the mapping: on the file
		// systems Linux has, with the file's allocation.
		if err := SyncData(s.Data, 0, SegmentHeaderLength); err != nil {
			return fmt.Errorf("journal: segment %s: sync header: %w", s.Path, err)
		}
		s.unsyncedHeader.Store(false)
	}
	if !s.unsyncedName.Load() {
		return nil
	}
	if err := mmapfile.SyncDir(s.dir); err != nil {
		return fmt.Errorf("journal: segment %s: sync directory: %w", s.Path, err)
	}
	s.unsyncedName.Store(false)
	return nil
}

// discard unmaps and removes a prepared segment that will not be used.
func (s *Segment) Discard() error {
	err := s.Release()
	if rerr := os.Remove(s.Path); err == nil {
		err = rerr
	}
	return err
}

// ReleasedError is what a holder of a revoked segment gets: ErrReleased,
// and ErrBehindRetention too if retention deleted the segment.
func (s *Segment) ReleasedError() error {
	if s.Deleted.Load() {
		return fmt.Errorf("%w: %w: %s deleted past the hard size limit", ErrBehindRetention, ErrReleased, s.Path)
	}
	return fmt.Errorf("%w: %s", ErrReleased, s.Path)
}
