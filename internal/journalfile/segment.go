package journal

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

// segmentName is the file name of the segment starting at position start:
// zero-padded, so that a directory listing sorts by position.
func segmentName(start int64) string { return fmt.Sprintf("%020d%s", start, segmentSuffix) }

// parseSegmentName returns the start position a segment file name encodes.
func parseSegmentName(name string) (int64, bool) {
	if len(name) != 20+len(segmentSuffix) || filepath.Ext(name) != segmentSuffix {
		return 0, false
	}
	v, err := strconv.ParseInt(name[:20], 10, 64)
	return v, err == nil && v >= 0
}

// segment is one mapped segment file: the mapped file.
//
// A segment is reference counted. The journal's table holds one reference
// while the segment is in the table; a reader (a Tailer, the flusher, the
// writer) holds one while it reads or writes it. The last release unmaps.
// Journal.Close drops the table's references; if holders remain after the
// grace interval (the forced cleanup after a first shutdown time of
// RocketMQ's mapped files), forceRelease revokes the mapping: its pages
// become anonymous zero pages (revokeMapping), released is set, and a
// holder that reads on finds released and returns ErrReleased. It never
// faults.
type segment struct {
	start int64  // position of the segment's first byte
	path  string // file path
	dir   string // its directory, and its final path while prepared
	final string
	data  []byte // the whole mapping; len == segment size
	words unsafe.Pointer
	// file is the mapped file's identity (os.SameFile) where it was
	// opened by name (openSegment): a reader checks it against the file
	// under that name, which a recovering writer may have replaced.
	file os.FileInfo

	refs     atomic.Int64
	released atomic.Bool // the mapping was revoked under holders
	deleted  atomic.Bool // retention removed the file

	// unsyncedName: renamed into place, directory not synced since.
	unsyncedName atomic.Bool

	// created is the header's creation time (ns), the segment's age for
	// retention once the next segment exists.
	created int64

	mu       sync.Mutex // guards unmapped and revoked
	unmapped bool
	revoked  bool
}

// length returns the word at off as an acquire load. It pairs with the
// writer's release store of the length word in commit: a reader that sees
// a non-zero length sees every byte of the record before it (valid on
// arm64: sync/atomic loads are acquire, stores release).
func (s *segment) length(off int64) int32 {
	return (*atomic.Int32)(unsafe.Add(s.words, off)).Load()
}

// storeLength publishes a record or marker at off: a release store
// (atomicbuf.StoreRelease32, a plain MOV on amd64), enough because readers
// synchronise through this word alone.
func (s *segment) storeLength(off int64, v int32) {
	atomicbuf.StoreRelease32((*atomic.Int32)(unsafe.Add(s.words, off)), v)
}

// hold takes a reference, failing once the segment is shut down or
// released.
func (s *segment) hold() error {
	for {
		n := s.refs.Load()
		if n <= 0 || s.released.Load() {
			return fmt.Errorf("%w: %s", ErrReleased, s.path)
		}
		if s.refs.CompareAndSwap(n, n+1) {
			return nil
		}
	}
}

// release gives back a reference; the last one unmaps (the file's pages,
// or the zero pages forceRelease put in their place).
func (s *segment) release() error {
	n := s.refs.Add(-1)
	if n < 0 {
		return fmt.Errorf("%w: %s: release without a reference", ErrReleased, s.path)
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
	return mmapfile.Unmap(s.data)
}

// forceRelease revokes the mapping under its holders: they read zero
// pages from then on, and find released set when they check after reading.
// The address range stays reserved until the last holder releases.
func (s *segment) forceRelease() error {
	s.released.Store(true)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.unmapped || s.revoked {
		return nil
	}
	s.revoked = true
	if err := mmapfile.Revoke(s.data); err != nil {
		return fmt.Errorf("journal: revoke %s: %w", s.path, err)
	}
	return nil
}

// openSegment maps an existing segment file and checks its header. size is
// the journal's segment size (0: take it from the header).
func openSegment(path string, start, size int64, writable bool) (*segment, error) {
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
	var hdr [segmentHeaderLength]byte
	if _, err := f.ReadAt(hdr[:], 0); err != nil {
		return nil, fmt.Errorf("%w: segment %s: header: %v", ErrCorrupt, path, err)
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
	s.file = fi
	return s, nil
}

func newSegment(path string, start, created int64, data []byte) *segment {
	s := &segment{start: start, path: path, data: data, created: created, words: unsafe.Pointer(unsafe.SliceData(data))}
	s.refs.Store(1)
	return s
}

// checkSegmentHeader validates a segment header read from a file whose
// name says start; it returns the segment size and creation time.
func checkSegmentHeader(b []byte, start int64, path string) (size, created int64, err error) {
	le := binary.LittleEndian
	if string(b[segMagicOffset:segMagicOffset+8]) != segMagic {
		return 0, 0, fmt.Errorf("%w: segment %s: bad magic %q", ErrCorrupt, path, b[:8])
	}
	if v := le.Uint32(b[segVersionOffset:]); v != version {
		return 0, 0, fmt.Errorf("%w: segment %s: version %d, want %d", ErrVersion, path, v, version)
	}
	if got, want := crc32.Checksum(b[:segCRCOffset], castagnoli), le.Uint32(b[segCRCOffset:]); got != want {
		return 0, 0, fmt.Errorf("%w: segment %s: header CRC %#08x, header says %#08x", ErrCorrupt, path, got, want)
	}
	size = int64(le.Uint64(b[segSizeOffset:]))
	if err := checkSegmentSize(size); err != nil || le.Uint32(b[segHdrLenOffset:]) != segmentHeaderLength {
		return 0, 0, fmt.Errorf("%w: segment %s: size %d, header length %d", ErrCorrupt, path, size, le.Uint32(b[segHdrLenOffset:]))
	}
	if s := int64(le.Uint64(b[segStartOffset:])); s != start || start&(size-1) != 0 {
		return 0, 0, fmt.Errorf("%w: segment %s: header start %d, name says %d", ErrCorrupt, path, s, start)
	}
	return size, int64(le.Uint64(b[segCreatedOffset:])), nil
}

func checkSegmentSize(size int64) error {
	if size < MinSegmentSize || size > maxSegmentSize || size&(size-1) != 0 {
		return fmt.Errorf("%w: segment size %d: a power of two from %d to %d", ErrArgument, size, MinSegmentSize, maxSegmentSize)
	}
	return nil
}

// createSegment creates, preallocates and maps a new segment (see
// prepareSegment), renames it into place and syncs the directory.
func createSegment(dir string, start, size, created int64) (*segment, error) {
	s, err := prepareSegment(dir, start, size, created)
	if err != nil {
		return nil, err
	}
	if err := s.publish(created); err != nil {
		_ = s.discard()
		return nil, err
	}
	if err := s.syncName(); err != nil {
		return nil, err
	}
	return s, nil
}

// prepareSegment creates a complete segment under a temporary name: the
// file preallocated (a full disk is an error here, not a SIGBUS at a later
// store), its header written and synced, the file mapped. Nobody else
// opens it until publish renames it into place: a segment file under its
// final name is always complete.
func prepareSegment(dir string, start, size, created int64) (*segment, error) {
	path := filepath.Join(dir, segmentName(start))
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("journal: create segment: %w", err)
	}
	defer f.Close()
	fail := func(err error) (*segment, error) {
		_ = os.Remove(tmp)
		return nil, fmt.Errorf("journal: create segment %s: %w", path, err)
	}
	if err := mmapfile.Preallocate(int(f.Fd()), size, mmapfile.Fallocate); err != nil {
		return fail(err)
	}
	var hdr [segmentHeaderLength]byte
	putSegmentHeader(hdr[:], size, start, created)
	if _, err := f.WriteAt(hdr[:], 0); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	data, err := mapFile(f, size, true)
	if err != nil {
		return fail(err)
	}
	s := newSegment(tmp, start, created, data)
	s.dir, s.final = dir, path
	return s, nil
}

// publish stamps a prepared segment's header with its creation time (the
// moment it becomes the writer's: retention's age) and renames it into
// place. Its name is durable only after syncName.
func (s *segment) publish(created int64) error {
	putSegmentHeader(s.data[:segmentHeaderLength], int64(len(s.data)), s.start, created)
	s.created = created
	if _, err := os.Stat(s.final); err == nil {
		return fmt.Errorf("journal: create segment %s: %w: segment exists", s.final, ErrArgument)
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("journal: create segment: %w", err)
	}
	if err := os.Rename(s.path, s.final); err != nil {
		return fmt.Errorf("journal: create segment: %w", err)
	}
	s.path = s.final
	s.unsyncedName.Store(true)
	return nil
}

// syncName makes a published segment's name durable (fsync of the
// directory), once. Flush calls it before it syncs any byte of the
// segment, so a durable record is never in a file whose name could be
// lost.
func (s *segment) syncName() error {
	if !s.unsyncedName.Load() {
		return nil
	}
	if err := mmapfile.SyncDir(s.dir); err != nil {
		return fmt.Errorf("journal: segment %s: sync directory: %w", s.path, err)
	}
	s.unsyncedName.Store(false)
	return nil
}

// discard unmaps and removes a prepared segment that will not be used.
func (s *segment) discard() error {
	err := s.release()
	if rerr := os.Remove(s.path); err == nil {
		err = rerr
	}
	return err
}

// releasedError is what a holder of a revoked segment gets: ErrReleased,
// and ErrBehindRetention too if retention deleted the segment.
func (s *segment) releasedError() error {
	if s.deleted.Load() {
		return fmt.Errorf("%w: %w: %s deleted past the hard size limit", ErrBehindRetention, ErrReleased, s.path)
	}
	return fmt.Errorf("%w: %s", ErrReleased, s.path)
}
