package journalfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/dutyrt/duty/internal/mmapfile"
)

// Status file layout: "status" in the journal's directory, StatusLength
// bytes, mapped by the writer, which stores its words (one atomic store
// each); a reader in any process (Inspect) maps it read-only and loads
// them. Each word is consistent on its own; the words are not a snapshot
// of one instant.
//
//	offset  size  field
//	0       8     magic "DUTYJSTA"
//	8       4     layout version (Version)
//	12      4     length (StatusLength)
//	16      8     committed position
//	24      8     flushed position
//	32      8     registered Tailers, all processes (active registry slots, and the writer's Tailers without one)
//	40      8     segments in the journal
//	48      8     updated, ns since the Unix epoch (Options.Clock)
//	56      8     writer's process id (0 once the writer has closed)
const (
	StatusLength      = 64
	StatusName        = "status"
	StatusMagic       = "DUTYJSTA"
	StVersionOffset   = 8
	StLengthOffset    = 12
	StCommittedOffset = 16
	StFlushedOffset   = 24
	StTailersOffset   = 32
	StSegmentsOffset  = 40
	StUpdatedOffset   = 48
	StWriterPIDOffset = 56
)

// StatusFile is the writer's mapped status file. Its words are stored
// with atomic stores (release), which a reader's atomic loads (Inspect)
// pair with; each word is consistent on its own.
type StatusFile struct{ b []byte }

// CreateStatus creates dir's status file (replacing any), maps it and
// stores this process's id as the writer's.
func CreateStatus(dir string) (*StatusFile, error) {
	path := filepath.Join(dir, StatusName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("journal: status: %w", err)
	}
	defer f.Close()
	var hdr [StatusLength]byte
	copy(hdr[:], StatusMagic)
	binary.LittleEndian.PutUint32(hdr[StVersionOffset:], Version)
	binary.LittleEndian.PutUint32(hdr[StLengthOffset:], StatusLength)
	if _, err := f.WriteAt(hdr[:], 0); err != nil {
		return nil, fmt.Errorf("journal: status: %w", err)
	}
	b, err := mapFile(f, StatusLength, true)
	if err != nil {
		return nil, err
	}
	s := &StatusFile{b: b}
	s.word(StWriterPIDOffset).Store(int64(os.Getpid()))
	return s, nil
}

// word is the status file's word at off.
func (s *StatusFile) word(off int) *atomic.Int64 {
	return (*atomic.Int64)(unsafe.Pointer(&s.b[off]))
}

// Publish stores the writer's positions and counts. It allocates nothing.
func (s *StatusFile) Publish(committed, flushed, tailers, segments, updated int64) {
	s.word(StCommittedOffset).Store(committed)
	s.word(StFlushedOffset).Store(flushed)
	s.word(StTailersOffset).Store(tailers)
	s.word(StSegmentsOffset).Store(segments)
	s.word(StUpdatedOffset).Store(updated)
}

// Close marks the writer gone (process id 0) and unmaps the file.
func (s *StatusFile) Close() error {
	s.word(StWriterPIDOffset).Store(0)
	return mmapfile.Unmap(s.b)
}

// Info is what Inspect finds in a journal's directory, without opening
// the journal: nothing is locked, mapped writable or written.
type Info struct {
	Dir      string
	Segments []int64 // start positions, oldest first
	// SegmentSize is the size of the segment files (0 without any).
	SegmentSize int64
	// HasStatus: a writer has published a status file (Status holds it).
	HasStatus bool
	Status    Status
	// Streams are the indexed streams, by id: the records indexed so far
	// (the writer's Flusher indexes behind the log).
	Streams []StreamInfo
	// HasReaders: the journal has a reader registry; Readers are its
	// claimed slots, in every process, by slot (Alive false: the owner is
	// dead and the slot not reclaimed yet).
	HasReaders bool
	Readers    []ReaderInfo
}

// LiveReaders counts the registered readers whose process runs.
func (i Info) LiveReaders() int {
	n := 0
	for _, r := range i.Readers {
		if r.Alive && !r.Pending {
			n++
		}
	}
	return n
}

// Status is the writer's published status (see the status file layout).
type Status struct {
	Committed int64 // end of the last committed record
	Flushed   int64 // durable up to here
	Tailers   int64 // registered Tailers, all processes, as the writer last counted them
	Segments  int64
	Updated   int64 // ns since the Unix epoch, by the writer's clock
	WriterPID int   // 0: the writer closed the journal
}

// FlushLag is how many committed bytes are not yet durable.
func (s Status) FlushLag() int64 { return max(s.Committed-s.Flushed, 0) }

// StreamInfo describes one stream's index.
type StreamInfo struct {
	ID      uint32
	First   int64 // the sequence of the index's first entry
	Indexed int64 // entries: the stream's records indexed from First on
}

// IsJournal reports whether dir looks like a journal's directory: it holds
// a writer lock file or a segment file.
func IsJournal(dir string) bool {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if e.Name() == LockName {
			return true
		}
		if _, ok := ParseSegmentName(e.Name()); ok {
			return true
		}
	}
	return false
}

// Inspect describes the journal in dir from its files: the segments (by
// name), the writer's status file, the stream indexes' headers and sizes,
// and the reader registry's readers (whose liveness it judges from this
// process, without reclaiming anything). It reads, never writes, and takes no lock: safe beside a running
// writer. A status, index or registry file that is not what this package
// writes is an error matching ErrCorrupt (or ErrVersion); Info then holds
// what was read before it (a registry's valid slots, too).
func Inspect(dir string) (Info, error) {
	info := Info{Dir: dir}
	starts, err := ListSegments(dir, false)
	if err != nil {
		return info, err
	}
	info.Segments = starts
	if len(starts) > 0 {
		fi, err := os.Stat(filepath.Join(dir, SegmentName(starts[0])))
		if err == nil {
			info.SegmentSize = fi.Size()
		}
	}
	st, err := readStatus(filepath.Join(dir, StatusName))
	switch {
	case err == nil:
		info.HasStatus, info.Status = true, st
	case !errors.Is(err, os.ErrNotExist):
		return info, err
	}
	info.Streams, err = readStreams(filepath.Join(dir, IndexDirName))
	if err != nil {
		return info, err
	}
	info.Readers, err = readReaders(filepath.Join(dir, ReadersName))
	switch {
	case err == nil:
		info.HasReaders = true
	case errors.Is(err, os.ErrNotExist):
		return info, nil
	default:
		info.HasReaders = len(info.Readers) > 0
	}
	for k := range info.Readers {
		if r := &info.Readers[k]; info.HasStatus {
			r.Lag = max(info.Status.Committed-r.Position, 0)
		}
	}
	return info, err
}

// readStatus maps a status file read-only and loads its words.
func readStatus(path string) (Status, error) {
	f, err := os.Open(path)
	if err != nil {
		return Status{}, fmt.Errorf("journal: status: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Status{}, fmt.Errorf("journal: status: %w", err)
	}
	if fi.Size() != StatusLength {
		return Status{}, fmt.Errorf("%w: status file of %d bytes", ErrCorrupt, fi.Size())
	}
	b, err := mapFile(f, StatusLength, false)
	if err != nil {
		return Status{}, err
	}
	defer mmapfile.Unmap(b)
	le := binary.LittleEndian
	if string(b[:8]) != StatusMagic || le.Uint32(b[StVersionOffset:]) != Version || le.Uint32(b[StLengthOffset:]) != StatusLength {
		return Status{}, fmt.Errorf("%w: status file header %q", ErrCorrupt, b[:16])
	}
	w := func(off int) int64 { return (*atomic.Int64)(unsafe.Pointer(&b[off])).Load() }
	return Status{
		Committed: w(StCommittedOffset), Flushed: w(StFlushedOffset), Tailers: w(StTailersOffset),
		Segments: w(StSegmentsOffset), Updated: w(StUpdatedOffset), WriterPID: int(w(StWriterPIDOffset)),
	}, nil
}

// readStreams reads the index files' headers: one StreamInfo per stream,
// in order of id.
func readStreams(dir string) ([]StreamInfo, error) {
	streams, _, _, err := listIndexDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	ids := make([]uint32, 0, len(streams))
	for id := range streams {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	out := make([]StreamInfo, 0, len(ids))
	for _, id := range ids {
		f, err := OpenIndexFile(filepath.Join(dir, streams[id]), id, false)
		if errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("%w: %w", ErrCorrupt, err) // a header cut short
		}
		if err != nil {
			return out, err
		}
		out = append(out, StreamInfo{ID: id, First: f.First, Indexed: f.Count})
		f.Close()
	}
	return out, nil
}
