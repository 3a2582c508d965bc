package journal

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dutyrt/duty/internal/journalfile"
	"github.com/dutyrt/duty/internal/mmapfile"
)

// FlushPolicy says when committed records are made durable (msync).
// docs/journal.md, "Durability" says which crash loses what under each.
type FlushPolicy int

const (
	// FlushOS leaves write-back to the operating system; only Close and
	// explicit Flush calls sync.
	FlushOS FlushPolicy = iota
	// FlushPeriodic syncs when Options.FlushBytes have been committed
	// since the last sync or Options.FlushInterval has passed, whichever
	// comes first, from a Flusher agent's duty cycle: never on the
	// appender's thread.
	FlushPeriodic
	// FlushEveryCommit syncs the record's pages before Commit returns.
	FlushEveryCommit
)

// RecoveryMode says what Open does with a corrupt record that is not the
// torn tail of the log (a valid record follows it).
type RecoveryMode int

const (
	// RecoverStrict fails Open with an error matching ErrCorrupt naming the
	// record.
	RecoverStrict RecoveryMode = iota
	// RecoverSkip overwrites the corrupt record's first eight bytes with
	// padding that readers step over (the rest of its segment, if its
	// length cannot be trusted), counts it in Recovery.Skipped and goes on.
	RecoverSkip
	// RecoverTruncate truncates the log at the corrupt record, discarding
	// everything after it.
	RecoverTruncate
)

// Options configure Open. The zero value is a writer with 64 MiB
// segments, FlushOS and RecoverStrict.
type Options struct {
	// SegmentSize is the size of a segment file: a power of two from
	// MinSegmentSize to 1 GiB, 64 MiB if zero. It is
	// fixed when the journal is created; opening an existing journal with
	// another non-zero size is an error.
	SegmentSize int64
	// ReadOnly opens the journal for reading only (Tailers), without the
	// writer lock and without recovery: the mode for readers in other
	// processes than the writer's.
	ReadOnly bool
	// Flush is the durability policy; FlushBytes and FlushInterval its
	// thresholds under FlushPeriodic (defaults: 1 MiB and 10 ms).
	Flush         FlushPolicy
	FlushBytes    int64
	FlushInterval time.Duration
	// Recovery is what Open does with a corrupt record in the middle of
	// the log.
	Recovery RecoveryMode
	// CloseGrace is how long Close waits for readers holding a segment
	// before it revokes the mapping under them (default 1 s).
	CloseGrace time.Duration
	// Retention; see ApplyRetention. Zero disables each rule.
	RetainAge      time.Duration
	RetainBytes    int64
	HardLimitBytes int64
	// PrefaultBytes is how far ahead of the writer a Flusher faults the
	// log's pages in, so that the appender does not take the page faults
	// of fresh segment pages (16 MiB if zero; negative: not
	// at all). See docs/journal.md, "Costs".
	PrefaultBytes int64
	// Clock returns the time stamped on records and segments, in ns since
	// the Unix epoch (default time.Now().UnixNano()).
	Clock func() int64
	// Logger receives recovery and retention reports (default
	// slog.Default()).
	Logger *slog.Logger
	// ReaderName names this Journal's Tailers in the reader registry, for
	// tools (cmd/dutystat); at most 76 bytes are kept (default:
	// the program's name).
	ReaderName string
}

func (o *Options) defaults() {
	if o.SegmentSize == 0 {
		o.SegmentSize = journalfile.DefaultSegmentSize
	}
	if o.FlushBytes <= 0 {
		o.FlushBytes = 1 << 20
	}
	if o.FlushInterval <= 0 {
		o.FlushInterval = 10 * time.Millisecond
	}
	if o.PrefaultBytes == 0 {
		o.PrefaultBytes = defaultPrefaultBytes
	}
	if o.CloseGrace <= 0 {
		o.CloseGrace = time.Second
	}
	if o.Clock == nil {
		o.Clock = func() int64 { return time.Now().UnixNano() }
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.ReaderName == "" {
		o.ReaderName = journalfile.SelfIdentity().NamePrefix
	}
}

// MinSegmentSize is the smallest segment size Options.SegmentSize takes
// (64 KiB); a segment size is a power of two up to 1 GiB.
const MinSegmentSize = journalfile.MinSegmentSize

// RecordHeader is a record's decoded header (docs/journal.md, "Record").
type RecordHeader = journalfile.RecordHeader

// Journal is a durable, segmented, memory-mapped log in one directory. See
// the package documentation for the contract.
type Journal struct {
	dir      string
	opts     Options
	segSize  int64
	readOnly bool
	lock     *os.File
	// trustFrom: a Tailer of this journal verifies the CRC of the records
	// before it, which came from disk, and trusts those from it on, which
	// this process's writer committed (the log's end at recovery; never,
	// in a read-only journal).
	trustFrom int64

	mu      sync.Mutex             // guards segs and tailers
	segs    []*journalfile.Segment // contiguous, by start; each holds the table's reference
	tailers map[*Tailer]struct{}
	closed  atomic.Bool

	// Writer state, owned by the writer's goroutine.
	cur       *journalfile.Segment // the segment being written; the writer holds it
	pos       int64                // next append position
	claim     claimState
	claimOpen bool
	maxBody   int                // MaxBody
	streams   map[uint32]*Stream // next sequence per stream

	// committed is the end of the last committed slot: stored by the
	// writer (release) after the record's length word, loaded by Flush
	// (acquire), so a flush up to committed covers whole records.
	committed atomic.Int64
	// flushed is the position up to which every byte is durable.
	flushed   atomic.Int64
	flushMu   sync.Mutex // serialises Flush and checkpoints
	lastCkpt  int64      // flushed position of the last checkpoint (flushMu)
	lastFlush atomic.Int64

	prefaulted  int64 // pages are faulted in up to here (Flusher)
	prefaultOff bool  // the system cannot pre-fault (Flusher)

	prepMu   sync.Mutex              // guards prepared
	prepared *journalfile.Segment    // the next segment, made ahead by a Flusher, not yet in place
	idx      *indexer                // the writer's stream indexes
	status   *journalfile.StatusFile // the writer's status file, mapped (nil: none)
	reg      *journalfile.Registry   // the reader registry; nil where it cannot be written (j.mu)
	stats    stats
	recovery Recovery
}

// Open opens the journal in dir, creating it (and dir) if it does not
// exist. A writer (the default) takes the directory's writer lock
// (ErrLocked if another Journal holds it, in any process) and recovers
// the log; Recovery reports what recovery did. A reader (Options.ReadOnly)
// needs an existing journal.
func Open(dir string, opts Options) (*Journal, error) {
	explicitSize := opts.SegmentSize
	opts.defaults()
	if err := journalfile.CheckSegmentSize(opts.SegmentSize); err != nil {
		return nil, err
	}
	j := &Journal{dir: dir, opts: opts, readOnly: opts.ReadOnly, trustFrom: math.MaxInt64, tailers: map[*Tailer]struct{}{}, streams: map[uint32]*Stream{}}
	if !j.readOnly {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("journal: %w", err)
		}
		lf, err := os.OpenFile(filepath.Join(dir, journalfile.LockName), os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, fmt.Errorf("journal: lock: %w", err)
		}
		locked, err := mmapfile.TryLock(int(lf.Fd()))
		if err == nil && !locked {
			err = fmt.Errorf("%w: %s", ErrLocked, lf.Name())
		} else if err != nil {
			err = fmt.Errorf("journal: flock %s: %w", lf.Name(), err)
		}
		if err != nil {
			lf.Close()
			return nil, err
		}
		j.lock = lf
	}
	// A reader may race the writer's retention: a segment listed may be
	// gone when it opens it. It lists again (the writer deletes oldest
	// first, so the listing converges).
	for attempt := 0; ; attempt++ {
		err := j.mapSegments(explicitSize)
		if err == nil {
			break
		}
		j.releaseAll()
		if !j.readOnly || attempt == 4 || !errors.Is(err, os.ErrNotExist) {
			j.unlock()
			return nil, err
		}
	}
	j.maxBody = j.MaxBody()
	if j.readOnly {
		if err := j.openReaders(); err != nil {
			j.releaseAll()
			return nil, err
		}
		return j, nil
	}
	if err := j.recover(); err != nil {
		j.releaseAll()
		j.unlock()
		return nil, err
	}
	j.trustFrom = j.recovery.End
	if err := j.openIndex(j.recovery.End); err != nil {
		if j.idx != nil {
			_ = j.idx.close()
		}
		j.releaseAll()
		j.unlock()
		return nil, err
	}
	if err := j.openReaders(); err != nil {
		_ = j.idx.close()
		j.releaseAll()
		j.unlock()
		return nil, err
	}
	if err := j.openStatus(); err != nil {
		if j.reg != nil {
			_ = j.reg.Close(false)
		}
		_ = j.idx.close()
		j.releaseAll()
		j.unlock()
		return nil, err
	}
	return j, nil
}

// OpenReaders maps the reader registry (creating it if missing). Where it
// cannot be written (a read-only file system, another user's directory),
// the journal works without it, logged: its Tailers are then unregistered
// in other processes than the writer's. A writer publishes its first
// segment as the floor and frees the slots of dead readers.
func (j *Journal) openReaders() error {
	replace := !j.readOnly && j.opts.Recovery != RecoverStrict
	r, replaced, err := journalfile.OpenReaders(j.dir, replace)
	if replaced && err == nil {
		j.recovery.ReadersReplaced = fmt.Errorf("%w: damaged reader registry replaced", ErrCorrupt)
	}
	if errors.Is(err, journalfile.ErrRegistryUnavailable) {
		j.opts.Logger.Warn("journal: readers are not registered", "dir", j.dir, "err", err)
		return nil
	}
	if err != nil {
		return err
	}
	r.Logger = j.opts.Logger
	if !j.readOnly {
		first := j.first()
		r.Proposed().Store(first)
		r.Floor().Store(first)
		before := r.Active()
		r.ReclaimDead()
		j.recovery.ReadersReclaimed = max(before-r.Active(), 0)
	}
	j.reg = r
	return nil
}

// mapSegments lists and maps the journal's segment files, checking that
// they are contiguous and agree on their size (explicitSize: the size
// the caller asked for, 0 for any).
func (j *Journal) mapSegments(explicitSize int64) error {
	dir, opts := j.dir, j.opts
	starts, err := journalfile.ListSegments(dir, !j.readOnly)
	if err != nil {
		return err
	}
	j.segSize = opts.SegmentSize
	if len(starts) > 0 {
		s, err := journalfile.OpenSegment(filepath.Join(dir, journalfile.SegmentName(starts[0])), starts[0], 0, !j.readOnly)
		if err != nil {
			return err
		}
		j.segSize = int64(len(s.Data))
		j.noteRebuilt(s)
		if explicitSize != 0 && explicitSize != j.segSize {
			_ = s.Release()
			return fmt.Errorf("%w: segment size %d, the journal's is %d", ErrArgument, explicitSize, j.segSize)
		}
		j.segs = append(j.segs, s)
		for _, st := range starts[1:] {
			if want := j.segs[len(j.segs)-1].Start + j.segSize; st != want {
				if j.readOnly || opts.Recovery != RecoverTruncate {
					return fmt.Errorf("%w: %w: segment at %d missing (next file starts at %d)", errMissingSegment, ErrCorrupt, want, st)
				}
				j.recovery.RemovedSegments = append(j.recovery.RemovedSegments, j.removeFrom(starts, st)...)
				break
			}
			s, err := journalfile.OpenSegment(filepath.Join(dir, journalfile.SegmentName(st)), st, j.segSize, !j.readOnly)
			if err != nil {
				return err
			}
			j.noteRebuilt(s)
			j.segs = append(j.segs, s)
		}
	} else if j.readOnly {
		return fmt.Errorf("%w: no segment in %s", ErrNotFound, dir)
	}
	return nil
}

// noteRebuilt reports a segment whose header OpenSegment rebuilt.
func (j *Journal) noteRebuilt(s *journalfile.Segment) {
	if s.HeaderRebuilt {
		j.recovery.HeadersRebuilt = append(j.recovery.HeadersRebuilt, s.Path)
	}
}

// removeFrom removes the segment files from start st on (recovery in
// RecoverTruncate mode past a missing segment) and returns their paths.
func (j *Journal) removeFrom(starts []int64, st int64) []string {
	var removed []string
	for _, s := range starts {
		if s >= st {
			p := filepath.Join(j.dir, journalfile.SegmentName(s))
			if os.Remove(p) == nil {
				removed = append(removed, p)
			}
		}
	}
	_ = mmapfile.SyncDir(j.dir)
	return removed
}

func (j *Journal) unlock() {
	if j.lock != nil {
		_ = j.lock.Close() // drops the flock
		j.lock = nil
	}
}

// releaseAll drops the table's references (Open's failure path).
func (j *Journal) releaseAll() {
	if j.cur != nil {
		_ = j.cur.Release()
		j.cur = nil
	}
	for _, s := range j.segs {
		_ = s.Release()
	}
	j.segs = nil
}

// dirPath returns the journal's directory.
func (j *Journal) dirPath() string { return j.dir }

// segmentSize returns the journal's segment size.
func (j *Journal) segmentSize() int64 { return j.segSize }

// Recovery returns what Open's recovery did.
func (j *Journal) Recovery() Recovery { return j.recovery }

// segmentStart returns the start of the segment holding position p.
func (j *Journal) segmentStart(p int64) int64 { return p &^ (j.segSize - 1) }

// errNotYet: the segment a reader asks for does not exist yet.
var errNotYet = errors.New("journal: segment not created yet")

// acquire returns the segment starting at start, held by the caller.
// A reader of another process maps segments the writer created since.
func (j *Journal) acquire(start int64) (*journalfile.Segment, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed.Load() {
		return nil, ErrClosed
	}
	if j.readOnly {
		if err := j.followRetention(start); err != nil {
			return nil, err
		}
	}
	if len(j.segs) == 0 || start < j.segs[0].Start {
		return nil, fmt.Errorf("%w: position %d, oldest segment starts at %d", ErrBehindRetention, start, j.first())
	}
	i := (start - j.segs[0].Start) / j.segSize
	for i >= int64(len(j.segs)) {
		if !j.readOnly {
			return nil, errNotYet
		}
		next := j.segs[len(j.segs)-1].Start + j.segSize
		path := filepath.Join(j.dir, journalfile.SegmentName(next))
		s, err := journalfile.OpenSegment(path, next, j.segSize, false)
		if errors.Is(err, os.ErrNotExist) {
			if j.deleted(next) {
				return nil, fmt.Errorf("%w: segment %d was deleted by retention", ErrBehindRetention, next)
			}
			return nil, errNotYet
		}
		if err != nil {
			return nil, err
		}
		j.segs = append(j.segs, s)
	}
	s := j.segs[i]
	if j.readOnly && s.Length(journalfile.SegmentHeaderLength) == 0 {
		// Nothing in it yet: it may be a file a recovering writer has
		// removed and made again since this reader mapped it.
		if _, err := j.remapIfReplaced(s); err != nil {
			return nil, err
		}
		s = j.segs[i]
	}
	if err := s.Hold(); err != nil {
		return nil, err
	}
	return s, nil
}

// remapIfReplaced reports whether the file under s's name in a reader's
// table is another file than the one s maps: s was mapped while empty,
// past the log's end (a writer killed in its roll, after the next segment
// got its name and before the end-of-segment marker), the recovering
// writer removed it and a later roll made a new file under the same name.
// It then maps the new file in s's place and drops s and the segments
// after it from the table (their holders keep their references). A file
// not there (removed, not made again yet) is no replacement yet. j.mu
// held.
func (j *Journal) remapIfReplaced(s *journalfile.Segment) (bool, error) {
	if !j.readOnly || s.File == nil || len(j.segs) == 0 {
		return false, nil
	}
	k := (s.Start - j.segs[0].Start) / j.segSize
	if k < 0 || k >= int64(len(j.segs)) {
		return false, nil // no longer in the table
	}
	if j.segs[k] != s {
		return true, nil // replaced already, for another Tailer
	}
	fi, err := os.Stat(s.Path)
	if err != nil || os.SameFile(fi, s.File) {
		return false, nil
	}
	n, err := journalfile.OpenSegment(s.Path, s.Start, j.segSize, false)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for _, t := range j.segs[k:] {
		_ = t.Release()
	}
	j.segs = append(j.segs[:k], n)
	return true, nil
}

// segmentReplaced is remapIfReplaced for a Tailer waiting at the first
// slot of s.
func (j *Journal) segmentReplaced(s *journalfile.Segment) (bool, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed.Load() {
		return false, ErrClosed
	}
	return j.remapIfReplaced(s)
}

// followRetention drops from a reader's table the segments the writer's
// retention has deleted (before the registry's floor), so that their
// mappings (and disk space) go once no Tailer holds them. The table keeps
// at least one segment unless the Tailer asks for one at or after the
// floor: then it restarts at the floor. j.mu held.
func (j *Journal) followRetention(start int64) error {
	if j.reg == nil {
		return nil
	}
	floor := j.reg.Floor().Load()
	for len(j.segs) > 0 && j.segs[0].Start < floor && (len(j.segs) > 1 || start >= floor) {
		s := j.segs[0]
		s.Deleted.Store(true)
		j.segs = j.segs[1:]
		if err := s.Release(); err != nil {
			return err
		}
	}
	// Every mapped segment was deleted: the table starts again at the
	// floor (the oldest segment kept; another Tailer of this journal may
	// be there), retrying if retention moves it on meanwhile.
	for attempt := 0; len(j.segs) == 0; attempt++ {
		f := j.reg.Floor().Load()
		s, err := journalfile.OpenSegment(filepath.Join(j.dir, journalfile.SegmentName(f)), f, j.segSize, false)
		if err != nil && (!errors.Is(err, os.ErrNotExist) || attempt == 4) {
			return err
		}
		if err == nil {
			j.segs = append(j.segs, s)
		}
	}
	return nil
}

// deleted reports whether a missing segment file was deleted by retention
// (rather than not created yet): it is before the registry's proposed
// floor, or, without a registry, a later segment exists. j.mu held.
func (j *Journal) deleted(start int64) bool {
	if j.reg != nil {
		return start < j.reg.Proposed().Load()
	}
	starts, err := journalfile.ListSegments(j.dir, false)
	return err == nil && len(starts) > 0 && starts[len(starts)-1] > start
}

// first returns the start of the oldest segment (j.mu held).
func (j *Journal) first() int64 {
	if len(j.segs) == 0 {
		return 0
	}
	return j.segs[0].Start
}

// firstPosition returns the position of the oldest record slot still in
// the journal.
func (j *Journal) firstPosition() int64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.first() + journalfile.SegmentHeaderLength
}

// CommittedPosition returns the end of the last committed record (the
// writer's journal only; a reader's is 0).
func (j *Journal) CommittedPosition() int64 { return j.committed.Load() }

// flushedPosition returns the position up to which the log is durable.
func (j *Journal) flushedPosition() int64 { return j.flushed.Load() }

// Close closes the journal. A writer aborts an outstanding claim, flushes
// (under every policy: a clean close is durable), writes a checkpoint and
// drops the writer lock. Then every segment is shut down: Close waits up
// to Options.CloseGrace for Tailers still holding one, then revokes their
// mappings (they get ErrReleased, never a fault). Close is idempotent; call
// it from the writer's goroutine, after stopping any Flusher.
func (j *Journal) Close() error {
	if j.closed.Load() {
		return nil
	}
	var err error
	if !j.readOnly {
		if j.claimOpen {
			_ = j.Abort()
		}
		err = j.flush(true, true)
		if ierr := j.idx.close(); err == nil {
			err = ierr
		}
		j.prepMu.Lock()
		if j.prepared != nil {
			if derr := j.prepared.Discard(); err == nil {
				err = derr
			}
			j.prepared = nil
		}
		j.prepMu.Unlock()
		if serr := j.closeStatus(); err == nil {
			err = serr
		}
	}
	j.closed.Store(true)
	if j.cur != nil {
		if rerr := j.cur.Release(); err == nil {
			err = rerr
		}
		j.cur = nil
	}
	j.mu.Lock()
	segs := j.segs
	j.segs = nil
	j.mu.Unlock()
	for _, s := range segs {
		if rerr := s.Release(); err == nil {
			err = rerr
		}
	}
	if rerr := j.closeReaders(); err == nil {
		err = rerr
	}
	deadline := time.Now().Add(j.opts.CloseGrace)
	for _, s := range segs {
		for s.Refs.Load() > 0 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		if s.Refs.Load() > 0 {
			j.stats.forcedReleases.Add(1)
			if ferr := s.ForceRelease(); err == nil {
				err = ferr
			}
		}
	}
	j.unlock()
	return err
}

// closeReaders frees the registry slots of Tailers still open and unmaps
// the registry (see registry.close for Tailers used after Close).
func (j *Journal) closeReaders() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	r := j.reg
	if r == nil {
		return nil
	}
	j.reg = nil
	for t := range j.tailers {
		if t.slot >= 0 {
			r.Free(t.slot, t.word)
		}
	}
	return r.Close(len(j.tailers) > 0)
}

// stats are the journal's counters.
type stats struct {
	forcedReleases  atomic.Int64
	forcedDeletions atomic.Int64
	deletedSegments atomic.Int64
	flushes         atomic.Int64
}

// Stats is a snapshot of a journal's counters.
type Stats struct {
	Committed       int64 // end of the last committed record
	Flushed         int64 // durable up to here
	FirstPosition   int64 // oldest record slot still in the journal
	Segments        int   // segment files in the table
	Tailers         int   // registered Tailers
	Flushes         int64 // syncs done
	ForcedReleases  int64 // mappings revoked under a holder (Close, hard limit)
	DeletedSegments int64 // segments removed by retention
	ForcedDeletions int64 // of which past the hard size limit, under a reader
}

// Stats returns the journal's counters.
func (j *Journal) Stats() Stats {
	j.mu.Lock()
	st := Stats{FirstPosition: j.first() + journalfile.SegmentHeaderLength, Segments: len(j.segs), Tailers: len(j.tailers)}
	j.mu.Unlock()
	st.Committed = j.committed.Load()
	st.Flushed = j.flushed.Load()
	st.Flushes = j.stats.flushes.Load()
	st.ForcedReleases = j.stats.forcedReleases.Load()
	st.DeletedSegments = j.stats.deletedSegments.Load()
	st.ForcedDeletions = j.stats.forcedDeletions.Load()
	return st
}

// SegmentInfo describes one segment of the journal.
type SegmentInfo struct {
	Path    string
	Start   int64 // position of its first byte
	Size    int64
	Created int64 // ns since the Unix epoch
	// Committed and Flushed are the segment's offsets up to which bytes
	// were committed and made durable (a writer's journal; a reader's
	// are 0).
	Committed, Flushed int64
	Holders            int64 // references beyond the journal's own
}

// Segments describes the journal's segments, oldest first.
func (j *Journal) Segments() []SegmentInfo {
	j.mu.Lock()
	defer j.mu.Unlock()
	c, f := j.committed.Load(), j.flushed.Load()
	in := func(s *journalfile.Segment, p int64) int64 { return min(max(p-s.Start, 0), j.segSize) }
	out := make([]SegmentInfo, 0, len(j.segs))
	for _, s := range j.segs {
		si := SegmentInfo{Path: s.Path, Start: s.Start, Size: j.segSize, Created: s.Created, Holders: max(s.Refs.Load()-1, 0)}
		if !j.readOnly {
			si.Committed, si.Flushed = in(s, c), in(s, f)
		}
		out = append(out, si)
	}
	return out
}
