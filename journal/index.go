package journal

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/dutyrt/duty/internal/journalfile"
)

// IndexEntry is one entry of a stream index: where the record is, its
// length (header and body) and its type id.
type IndexEntry = journalfile.IndexEntry

// indexer keeps the stream indexes of a writer's journal up to date,
// behind the appender: it reads the log like a Tailer (unregistered, so it
// never holds back retention) and adds the entries to the index files in
// batches.
type indexer struct {
	j       *Journal
	mu      sync.Mutex // serialises indexing and lookups
	t       *Tailer
	files   *journalfile.IndexFiles
	rebuilt bool
	seen    atomic.Int64 // the committed position follow saw last
}

// openIndex opens the writer's indexes, checks them against the log and
// brings them up to its end (end: the log's end after recovery): an index
// that is missing, unreadable or that disagrees with the log (an entry
// past its end, or naming another record) is rebuilt from the log.
func (j *Journal) openIndex(end int64) error {
	files, foreign, err := journalfile.OpenIndexFiles(filepath.Join(j.dir, journalfile.IndexDirName))
	if err != nil {
		return err
	}
	x := &indexer{j: j, files: files}
	x.t = &Tailer{j: j, noCRC: true} // recovery has checked the log's framing
	j.idx = x
	if len(foreign) > 0 {
		j.recovery.ForeignFiles = foreign
		j.opts.Logger.Warn("journal: foreign files in the index directory, left alone", "dir", files.Dir, "files", foreign)
	}
	r := &j.recovery
	// rebuild drops every index file and indexes the log from its start.
	rebuild := func() error {
		if err := x.files.Reset(); err != nil {
			return err
		}
		x.t.setPos(j.firstPosition())
		x.rebuilt = true
		r.IndexedFrom, r.Indexed = x.t.Position(), 0
		return nil
	}
	if from, ok := x.load(end); ok {
		x.t.setPos(max(from, j.firstPosition()))
		r.IndexedFrom = x.t.Position()
	} else if err := rebuild(); err != nil {
		return err
	}
	for {
		n, err := x.index(1<<16, math.MaxInt64)
		if errors.Is(err, journalfile.ErrIndexGap) && !x.rebuilt {
			if err := rebuild(); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		r.Indexed += int64(n)
		if n == 0 && !x.rebuilt && !x.complete() {
			// An index behind the position file (a stream's file lost or
			// cut short): rebuild.
			if err := rebuild(); err != nil {
				return err
			}
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
// resumes from; ok is false when they cannot be trusted: the position
// file is missing, damaged or past end, or a stream's last entry does not
// name a record of the log.
func (x *indexer) load(end int64) (from int64, ok bool) {
	from, ok = x.files.Load(x.j.segSize)
	if !ok || from > end {
		return 0, false
	}
	for id, f := range x.files.Files {
		if f.Count > 0 { // the last entry must name a record of the log
			e, err := f.Entry(f.Count - 1)
			if err != nil || !x.j.recordAt(e, id, f.Next()-1, end) {
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
		f := x.files.Files[stream]
		if f == nil || f.Next() != next.next {
			return false
		}
	}
	return true
}

// recordAt reports whether the log holds, before end, the record e names,
// of stream and seq; a record retention deleted contradicts nothing.
func (j *Journal) recordAt(e IndexEntry, stream uint32, seq, end int64) bool {
	if e.Position < 0 || e.Position >= end {
		return false
	}
	err := j.entryNamesRecord(e, stream, seq)
	return err == nil || errors.Is(err, ErrBehindRetention)
}

// trim frees the index entries of records before first (the log's first
// kept position, after retention): IndexFiles.trim.
func (x *indexer) trim(first int64) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.files.Trim(first)
}

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
	return j.idx.index(max, math.MaxInt64)
}

// indexLag is how far behind the committed position follow stays while
// the writer appends: the indexer reads records' headers, and reading the
// cache lines the appender is writing would take each from it and make its
// next store wait for the line to come back.
const indexLag = 64 << 10

// follow is the Flusher's indexing: at most limit records, staying
// indexLag behind the committed position while it moves, and to the end
// once it has not moved since the last call (the writer pauses).
func (x *indexer) follow(limit int) (int, error) {
	committed := x.j.committed.Load()
	bound := committed
	if x.seen.Swap(committed) != committed {
		bound -= indexLag
	}
	return x.index(limit, bound)
}

// index indexes at most limit records, those that start before bound.
func (x *indexer) index(limit int, bound int64) (int, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	n := 0
	for n < limit && x.t.Position() < bound {
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
		added, err := x.files.Add(r.StreamID, r.Sequence, r.Position, r.Length, r.TypeID)
		if err != nil {
			return n, err
		}
		if !added { // indexed before the position file was written
			continue
		}
		n++
	}
	return n, x.files.WriteBatch(x.j.segSize, x.t.Position(), x.j.opts.Clock())
}

// close indexes the rest of the log, syncs the index files and closes
// them.
func (x *indexer) close() error {
	var err error
	for {
		n, ierr := x.index(1<<16, math.MaxInt64)
		if ierr != nil {
			err = ierr
		}
		if n == 0 || ierr != nil {
			break
		}
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if cerr := x.files.Close(); err == nil {
		err = cerr
	}
	if derr := x.t.Close(); err == nil {
		err = derr
	}
	return err
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
		if _, err := j.idx.index(math.MaxInt, math.MaxInt64); err != nil {
			return IndexEntry{}, err
		}
		j.idx.mu.Lock()
		defer j.idx.mu.Unlock()
		f := j.idx.files.Files[streamID]
		if f == nil || seq >= f.Next() {
			return IndexEntry{}, fmt.Errorf("%w: stream %d sequence %d", ErrNotFound, streamID, seq)
		}
		e, err := j.checkEntry(f, streamID, seq)
		// Rebuilt by the next writer's Open: without the position file,
		// nothing of the indexes is trusted.
		if errors.Is(err, errIndexDamaged) && j.idx.files.MarkDamaged() {
			j.opts.Logger.Warn("journal: damaged stream index, rebuilt at the next Open", "dir", j.dir, "err", err)
		}
		return e, err
	}
	f, err := journalfile.OpenIndexFile(filepath.Join(j.dir, journalfile.IndexDirName, journalfile.IndexName(streamID)), streamID, false)
	if errors.Is(err, ErrCorrupt) || errors.Is(err, ErrVersion) {
		return IndexEntry{}, err
	}
	if err != nil {
		return IndexEntry{}, fmt.Errorf("%w: stream %d: %w", ErrNotFound, streamID, err)
	}
	defer f.Close()
	if seq >= f.Next() {
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
func (j *Journal) checkEntry(f *journalfile.IndexFile, streamID uint32, seq int64) (IndexEntry, error) {
	if seq < f.First {
		return IndexEntry{}, fmt.Errorf("%w: stream %d sequence %d (index starts at %d)", ErrBehindRetention, streamID, seq, f.First)
	}
	e, err := f.Entry(seq - f.First)
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
