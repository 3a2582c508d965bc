package journal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/dutyrt/duty/internal/journalfile"
	"github.com/dutyrt/duty/internal/mmapfile"
)

// IndexEntry is one entry of a stream index.
type IndexEntry struct {
	Position int64 // the record's position in the log
	Length   int32 // header and body
	TypeID   int32
}

// indexFile is one stream's index file, as the writer's indexer keeps it.
type indexFile struct {
	f       *os.File
	first   int64 // sequence of entry 0
	count   int64 // entries in the file
	trimmed int64 // entries before this one are zeros, their blocks freed (trim)
}

// indexer keeps the stream indexes of a writer's journal up to date,
// behind the appender: it reads the log like a Tailer (unregistered, so it
// never holds back retention) and writes entries in batches.
type indexer struct {
	j       *Journal
	dir     string
	mu      sync.Mutex // serialises indexing and lookups
	t       *Tailer
	files   map[uint32]*indexFile
	batch   map[uint32][]byte // entries read, not yet written
	pos     *os.File          // the position file, opened at its first write
	posBuf  [checkpointLength]byte
	rebuilt bool
	// damaged: a Lookup found an entry that does not name its record; the
	// position file is gone and is not written again, so that the next
	// writer's Open rebuilds the indexes.
	damaged bool
}

// openIndex opens the writer's indexes, checks them against the log and
// brings them up to its end (end: the log's end after recovery): an index
// that is missing, unreadable or that disagrees with the log (an entry
// past its end, or naming another record) is rebuilt from the log.
func (j *Journal) openIndex(end int64) error {
	x := &indexer{j: j, dir: filepath.Join(j.dir, journalfile.IndexDirName), files: map[uint32]*indexFile{}, batch: map[uint32][]byte{}}
	x.t = &Tailer{j: j, noCRC: true} // recovery has checked the log's framing
	if err := os.MkdirAll(x.dir, 0o755); err != nil {
		return fmt.Errorf("journal: index: %w", err)
	}
	j.idx = x
	ents, err := os.ReadDir(x.dir)
	if err != nil {
		return fmt.Errorf("journal: index: %w", err)
	}
	for _, e := range ents {
		if !ownIndexFile(e) {
			j.recovery.ForeignFiles = append(j.recovery.ForeignFiles, filepath.Join(x.dir, e.Name()))
		}
	}
	if len(j.recovery.ForeignFiles) > 0 {
		j.opts.Logger.Warn("journal: foreign files in the index directory, left alone", "dir", x.dir, "files", j.recovery.ForeignFiles)
	}
	from, ok := x.load(end)
	if !ok {
		if err := x.reset(); err != nil {
			return err
		}
		from = j.firstPosition()
		x.rebuilt = true
	}
	x.t.setPos(max(from, j.firstPosition()))
	r := &j.recovery
	r.IndexedFrom = x.t.Position()
	for {
		n, err := x.index(1 << 16)
		if errors.Is(err, errIndexGap) && !x.rebuilt {
			if err := x.reset(); err != nil {
				return err
			}
			x.t.setPos(j.firstPosition())
			x.rebuilt = true
			r.IndexedFrom, r.Indexed = x.t.Position(), 0
			continue
		}
		if err != nil {
			return err
		}
		r.Indexed += int64(n)
		if n == 0 && !x.rebuilt && !x.complete() {
			// An index behind the position file (a stream's file lost or
			// cut short): rebuild.
			if err := x.reset(); err != nil {
				return err
			}
			x.t.setPos(j.firstPosition())
			x.rebuilt = true
			r.IndexedFrom, r.Indexed = x.t.Position(), 0
			continue
		}
		if n == 0 {
			r.IndexRebuilt = x.rebuilt && r.Indexed > 0 // an empty log has nothing to rebuild
			if r.IndexRebuilt {
				j.opts.Logger.Info("journal: stream indexes rebuilt", "dir", j.dir, "records", r.Indexed)
			}
			return nil
		}
	}
}

// load opens the existing index files and returns the position indexing
// resumes from; ok is false when they cannot be trusted.
func (x *indexer) load(end int64) (from int64, ok bool) {
	b, err := os.ReadFile(filepath.Join(x.dir, idxPosName))
	if err != nil {
		return 0, false
	}
	from, _, err = decodeFramed(b, journalfile.IdxPosMagic, x.j.segSize)
	if err != nil || from > end {
		return 0, false
	}
	ents, err := os.ReadDir(x.dir)
	if err != nil {
		return 0, false
	}
	for _, e := range ents {
		name := e.Name()
		if !ownIndexFile(e) || name == idxPosName {
			continue
		}
		id, _ := strconv.ParseUint(strings.TrimSuffix(name, ".idx"), 10, 32)
		f, err := os.OpenFile(filepath.Join(x.dir, name), os.O_RDWR, 0)
		if err != nil {
			return 0, false
		}
		fi, err := f.Stat()
		var hdr [journalfile.IndexHeaderLength]byte
		if err == nil {
			_, err = f.ReadAt(hdr[:], 0)
		}
		var first int64
		if err == nil {
			first, err = journalfile.CheckIndexHeader(hdr[:], uint32(id))
		}
		if err != nil {
			f.Close()
			return 0, false
		}
		xf := &indexFile{f: f, first: first, count: (fi.Size() - journalfile.IndexHeaderLength) / journalfile.IndexEntryLength}
		x.files[uint32(id)] = xf
		if xf.count > 0 { // the last entry must name a record of the log
			e, err := xf.entry(xf.count - 1)
			if err != nil || !x.j.recordAt(e, uint32(id), first+xf.count-1, end) {
				return 0, false
			}
		}
	}
	return from, true
}

// complete reports whether, with the log indexed to its end, every
// stream's index reaches the stream's next sequence (as recovery found it).
func (x *indexer) complete() bool {
	for stream, next := range x.j.streams {
		f := x.files[stream]
		if f == nil || f.first+f.count != next.next {
			return false
		}
	}
	return true
}

// recordAt reports whether the log holds, before end, the record e names,
// of stream and seq.
func (j *Journal) recordAt(e IndexEntry, stream uint32, seq, end int64) bool {
	if e.Position < 0 || e.Position >= end {
		return false
	}
	start := j.segmentStart(e.Position)
	s, err := j.acquire(start)
	if err != nil {
		return errors.Is(err, ErrBehindRetention) // gone: nothing to contradict
	}
	defer s.Release()
	off := e.Position - start
	if off < journalfile.SegmentHeaderLength {
		return false
	}
	h, _, kind, err := journalfile.DecodeSlot(s.Data[off:], false)
	return err == nil && kind == journalfile.SlotRecord && h.StreamID == stream && h.Sequence == seq && h.Length == e.Length && h.TypeID == e.TypeID
}

// reset removes every index file (before a rebuild).
func (x *indexer) reset() error {
	for _, f := range x.files {
		f.f.Close()
	}
	x.files = map[uint32]*indexFile{}
	clear(x.batch)
	if x.pos != nil {
		x.pos.Close()
		x.pos = nil
	}
	ents, err := os.ReadDir(x.dir)
	if err != nil {
		return fmt.Errorf("journal: index: %w", err)
	}
	for _, e := range ents {
		if !ownIndexFile(e) {
			continue // not the journal's: left alone (Recovery.ForeignFiles)
		}
		if err := os.Remove(filepath.Join(x.dir, e.Name())); err != nil {
			return fmt.Errorf("journal: index: %w", err)
		}
	}
	return nil
}

// idxPosName is the index position file's name.
const idxPosName = "position"

// ownIndexFile reports whether an entry of the index directory is one the
// journal writes: a regular file named as a stream index (indexName) or
// the position file. Anything else is left alone.
func ownIndexFile(e os.DirEntry) bool {
	if !e.Type().IsRegular() {
		return false
	}
	name := e.Name()
	if name == idxPosName {
		return true
	}
	id, ok := strings.CutSuffix(name, ".idx")
	if !ok || len(id) != 10 {
		return false
	}
	_, err := strconv.ParseUint(id, 10, 32)
	return err == nil
}

// indexBlock is the unit trim frees: a file system block on common
// Linux file systems, and a page.
const indexBlock = 4096

// trim frees the disk blocks that hold only entries of records before
// first (the log's first kept position, after retention), in every stream
// index: the entries become zeros in place (fallocate PUNCH_HOLE), so
// entry n stays at its offset and the file keeps its layout, and a Lookup
// of such a record finds a position before first, ErrBehindRetention, as
// before. Entries are in position order, so the dead ones are a prefix,
// found by binary search. Where the file system cannot punch holes,
// nothing is trimmed (the entries stay, as they would without trim).
func (x *indexer) trim(first int64) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, f := range x.files {
		lo, hi := f.trimmed, f.count // the first entry at or after first is in [lo, hi]
		for lo < hi {
			mid := lo + (hi-lo)/2
			e, err := f.entry(mid)
			if err != nil {
				return err
			}
			if e.Position < first {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		from := journalfile.IndexHeaderLength + f.trimmed*journalfile.IndexEntryLength
		to := (journalfile.IndexHeaderLength + lo*journalfile.IndexEntryLength) &^ (indexBlock - 1)
		if to <= from {
			continue
		}
		err := mmapfile.PunchHole(int(f.f.Fd()), from, to-from)
		if errors.Is(err, mmapfile.ErrUnsupported) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("journal: index: trim: %w", err)
		}
		f.trimmed = (to - journalfile.IndexHeaderLength) / journalfile.IndexEntryLength
	}
	return nil
}

// errIndexGap: a record's sequence is past its stream index's next entry,
// so entries are missing.
var errIndexGap = errors.New("journal: index behind with a gap")

// indexUpTo brings the stream indexes up to at most max more records of the
// log, and returns how many it indexed. The Flusher calls it from its duty
// cycle; the appender never waits for it. Writer only.
func (j *Journal) indexUpTo(max int) (int, error) {
	if j.readOnly {
		return 0, ErrReadOnly
	}
	if j.closed.Load() {
		return 0, ErrClosed
	}
	return j.idx.index(max)
}

func (x *indexer) index(limit int) (int, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	n := 0
	var le = binary.LittleEndian
	for n < limit {
		r, ok, err := x.t.Next()
		if errors.Is(err, ErrBehindRetention) {
			x.t.setPos(x.j.firstPosition()) // retention went past: those entries are moot
			continue
		}
		if err != nil {
			return n, err
		}
		if !ok {
			break
		}
		f, err := x.file(r.StreamID, r.Sequence)
		if err != nil {
			return n, err
		}
		next := f.first + f.count + int64(len(x.batch[r.StreamID])/journalfile.IndexEntryLength)
		switch {
		case r.Sequence < next: // indexed before the position file was written
			continue
		case r.Sequence > next:
			return n, fmt.Errorf("%w: stream %d record %d, index at %d", errIndexGap, r.StreamID, r.Sequence, next)
		}
		var e [journalfile.IndexEntryLength]byte
		le.PutUint64(e[0:], uint64(r.Position))
		le.PutUint32(e[8:], uint32(r.Length))
		le.PutUint32(e[12:], uint32(r.TypeID))
		x.batch[r.StreamID] = append(x.batch[r.StreamID], e[:]...)
		n++
	}
	return n, x.writeBatch()
}

// file returns stream's index file, creating it with first sequence seq.
func (x *indexer) file(stream uint32, seq int64) (*indexFile, error) {
	if f := x.files[stream]; f != nil {
		return f, nil
	}
	path := filepath.Join(x.dir, journalfile.IndexName(stream))
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("journal: index: %w", err)
	}
	var hdr [journalfile.IndexHeaderLength]byte
	le := binary.LittleEndian
	copy(hdr[:], journalfile.IdxMagic)
	le.PutUint32(hdr[8:], journalfile.Version)
	le.PutUint32(hdr[12:], journalfile.IndexHeaderLength)
	le.PutUint32(hdr[journalfile.IdxStreamOffset:], stream)
	le.PutUint32(hdr[journalfile.IdxEntryLenOffset:], journalfile.IndexEntryLength)
	le.PutUint64(hdr[journalfile.IdxFirstOffset:], uint64(seq))
	le.PutUint32(hdr[journalfile.IdxCRCOffset:], crc32.Checksum(hdr[:journalfile.IdxCRCOffset], journalfile.Castagnoli))
	if _, err := f.WriteAt(hdr[:], 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("journal: index: %w", err)
	}
	xf := &indexFile{f: f, first: seq}
	x.files[stream] = xf
	return xf, nil
}

// writeBatch writes the batched entries (one write per stream), then the
// position they reach. Entries are written before the position, so after
// a crash the position never claims entries that are not there; entries
// past it are recognised and skipped when indexing resumes.
func (x *indexer) writeBatch() error {
	wrote := false
	for stream, b := range x.batch {
		if len(b) == 0 {
			continue
		}
		f := x.files[stream]
		if _, err := f.f.WriteAt(b, journalfile.IndexHeaderLength+f.count*journalfile.IndexEntryLength); err != nil {
			return fmt.Errorf("journal: index: %w", err)
		}
		f.count += int64(len(b) / journalfile.IndexEntryLength)
		x.batch[stream] = b[:0]
		wrote = true
	}
	if !wrote || x.damaged {
		return nil
	}
	if x.pos == nil {
		f, err := os.OpenFile(filepath.Join(x.dir, idxPosName), os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return fmt.Errorf("journal: index: %w", err)
		}
		x.pos = f
	}
	// Rewritten in place, always the same length: the Flusher's indexing
	// allocates nothing per batch. A torn write fails its CRC at the next
	// Open, which then rebuilds the indexes.
	putFramed(&x.posBuf, journalfile.IdxPosMagic, x.j.segSize, x.t.Position(), x.j.opts.Clock(), 0)
	if _, err := x.pos.WriteAt(x.posBuf[:], 0); err != nil {
		return fmt.Errorf("journal: index: %w", err)
	}
	return nil
}

// close indexes the rest of the log, syncs the index files and closes
// them.
func (x *indexer) close() error {
	var err error
	for {
		n, ierr := x.index(1 << 16)
		if ierr != nil {
			err = ierr
		}
		if n == 0 || ierr != nil {
			break
		}
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, f := range x.files {
		if serr := f.f.Sync(); err == nil {
			err = serr
		}
		if cerr := f.f.Close(); err == nil {
			err = cerr
		}
	}
	x.files = nil
	if x.pos != nil {
		if cerr := x.pos.Close(); err == nil {
			err = cerr
		}
		x.pos = nil
	}
	if derr := x.t.Close(); err == nil {
		err = derr
	}
	return err
}

// entry reads entry n of the file.
func (f *indexFile) entry(n int64) (IndexEntry, error) {
	var b [journalfile.IndexEntryLength]byte
	if _, err := f.f.ReadAt(b[:], journalfile.IndexHeaderLength+n*journalfile.IndexEntryLength); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return IndexEntry{}, fmt.Errorf("journal: index: %w", err)
	}
	le := binary.LittleEndian
	return IndexEntry{Position: int64(le.Uint64(b[0:])), Length: int32(le.Uint32(b[8:])), TypeID: int32(le.Uint32(b[12:]))}, nil
}

// Lookup returns the index entry of record seq of streamID: one read, no
// walk of the log. A writer first indexes what the log holds beyond the
// index. ErrBehindRetention for a sequence older than the stream's oldest
// kept record, ErrNotFound for one not (yet) in the log or the index. A
// reader in another process reads the writer's index files: what the
// writer has not indexed yet is ErrNotFound. The entry is checked against
// the record it names (stream, sequence, length, type): a damaged index
// is an error matching ErrCorrupt, never a wrong position, and a writer
// that finds one has its indexes rebuilt at the next Open
// (Recovery.IndexRebuilt).
func (j *Journal) Lookup(streamID uint32, seq int64) (IndexEntry, error) {
	if j.closed.Load() {
		return IndexEntry{}, ErrClosed
	}
	if !j.readOnly {
		if _, err := j.idx.index(int(^uint(0) >> 1)); err != nil {
			return IndexEntry{}, err
		}
		j.idx.mu.Lock()
		defer j.idx.mu.Unlock()
		f := j.idx.files[streamID]
		if f == nil || seq >= f.first+f.count {
			return IndexEntry{}, fmt.Errorf("%w: stream %d sequence %d", ErrNotFound, streamID, seq)
		}
		e, err := j.checkEntry(f, streamID, seq)
		if errors.Is(err, errIndexDamaged) && !j.idx.damaged {
			// Rebuilt by the next writer's Open: without the position
			// file, nothing of the indexes is trusted.
			j.idx.damaged = true
			_ = os.Remove(filepath.Join(j.idx.dir, idxPosName))
			j.opts.Logger.Warn("journal: damaged stream index, rebuilt at the next Open", "dir", j.dir, "err", err)
		}
		return e, err
	}
	fh, err := os.Open(filepath.Join(j.dir, journalfile.IndexDirName, journalfile.IndexName(streamID)))
	if err != nil {
		return IndexEntry{}, fmt.Errorf("%w: stream %d: %w", ErrNotFound, streamID, err)
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return IndexEntry{}, fmt.Errorf("journal: index: %w", err)
	}
	var hdr [journalfile.IndexHeaderLength]byte
	if _, err := fh.ReadAt(hdr[:], 0); err != nil {
		return IndexEntry{}, fmt.Errorf("%w: index of stream %d: %w", ErrNotFound, streamID, err)
	}
	first, err := journalfile.CheckIndexHeader(hdr[:], streamID)
	if err != nil {
		return IndexEntry{}, err
	}
	f := &indexFile{f: fh, first: first, count: (fi.Size() - journalfile.IndexHeaderLength) / journalfile.IndexEntryLength}
	if seq >= f.first+f.count {
		return IndexEntry{}, fmt.Errorf("%w: stream %d sequence %d not indexed", ErrNotFound, streamID, seq)
	}
	return j.checkEntry(f, streamID, seq)
}

// errIndexDamaged is what an index entry that does not name its record
// is; it matches ErrCorrupt.
var errIndexDamaged = fmt.Errorf("%w: damaged stream index", ErrCorrupt)

// checkEntry reads entry seq of f and checks it against the journal's
// retention and against the record it names: an entry is returned only if
// the log holds, at its position, a record of that stream and sequence,
// with the entry's length and type. Anything else is a damaged index
// (errIndexDamaged, matching ErrCorrupt), never a wrong answer.
func (j *Journal) checkEntry(f *indexFile, streamID uint32, seq int64) (IndexEntry, error) {
	if seq < f.first {
		return IndexEntry{}, fmt.Errorf("%w: stream %d sequence %d (index starts at %d)", ErrBehindRetention, streamID, seq, f.first)
	}
	e, err := f.entry(seq - f.first)
	if err != nil {
		return IndexEntry{}, err
	}
	if e.Position < j.firstPosition() {
		return IndexEntry{}, fmt.Errorf("%w: stream %d sequence %d at %d", ErrBehindRetention, streamID, seq, e.Position)
	}
	if err := j.entryNamesRecord(e, streamID, seq); err != nil {
		return IndexEntry{}, err
	}
	return e, nil
}

// entryNamesRecord checks that the log holds at e.Position the record e
// says, of streamID and seq: errIndexDamaged if not.
func (j *Journal) entryNamesRecord(e IndexEntry, streamID uint32, seq int64) error {
	damaged := func(what string) error {
		return fmt.Errorf("%w: stream %d sequence %d: entry names position %d, %s", errIndexDamaged, streamID, seq, e.Position, what)
	}
	start := j.segmentStart(e.Position)
	off := e.Position - start
	if off < journalfile.SegmentHeaderLength || e.Position&(journalfile.RecordAlignment-1) != 0 {
		return damaged("not a record slot")
	}
	s, err := j.acquire(start)
	switch {
	case err == errNotYet || errors.Is(err, os.ErrNotExist):
		return damaged("past the log's end")
	case err != nil:
		return err
	}
	defer s.Release()
	if s.Length(off) == 0 { // acquire: pairs with Commit's release store
		return damaged("an empty slot")
	}
	h, _, kind, derr := journalfile.DecodeSlot(s.Data[off:], false)
	if s.Released.Load() { // what was read may be zeros
		return s.ReleasedError()
	}
	switch {
	case derr != nil:
		return damaged(derr.Error())
	case kind != journalfile.SlotRecord:
		return damaged("no record")
	case h.StreamID != streamID || h.Sequence != seq || h.Length != e.Length || h.TypeID != e.TypeID:
		return damaged(fmt.Sprintf("a record of stream %d sequence %d, length %d, type %d (entry: length %d, type %d)",
			h.StreamID, h.Sequence, h.Length, h.TypeID, e.Length, e.TypeID))
	}
	return nil
}
