package journal

import (
	"errors"
	"strconv"

	"github.com/dutyrt/duty/internal/journalfile"
	"github.com/dutyrt/duty/internal/sentinel"
)

// Sentinel errors. Functions wrap them with the path or position and the
// numbers that failed (fmt.Errorf with %w); test with errors.Is.
var (
	// ErrCorrupt reports bytes in a segment, a checkpoint or an index that
	// no writer of this package produces: a bad CRC, a wrong magic word, a
	// length that does not fit. It matches duty.ErrCorrupt. Errors about a
	// record name its position and segment.
	ErrCorrupt = journalfile.ErrCorrupt
	// ErrVersion reports a segment, record or checkpoint of a layout
	// version this package cannot read.
	ErrVersion = journalfile.ErrVersion
	// ErrLocked reports a second writer: another Journal (in this process
	// or another) holds the directory's writer lock.
	ErrLocked = errors.New("journal: locked by another writer")
	// ErrReadOnly reports a write (Claim, Commit, Flush, retention) on a
	// journal opened with Options.ReadOnly.
	ErrReadOnly = errors.New("journal: read-only")
	// ErrClosed reports a call on a closed Journal or Tailer.
	ErrClosed = sentinel.Closed("journal: closed")
	// ErrReleased reports a read from a segment whose mapping was released
	// under its reader: by Close after the grace interval, or by forced
	// retention past the hard size limit.
	ErrReleased = journalfile.ErrReleased
	// ErrBehindRetention reports a position, sequence or time older than
	// the oldest segment still in the journal.
	ErrBehindRetention = journalfile.ErrBehindRetention
	// ErrArgument reports an invalid argument: a record too large for a
	// segment, a segment size that is not a power of two, a position that
	// is not a record boundary.
	ErrArgument = journalfile.ErrArgument
	// ErrClaim reports Commit or Abort without an outstanding claim, or a
	// Claim while one is outstanding.
	ErrClaim = errors.New("journal: claim out of order")
	// errMissingSegment reports a gap in the sequence of segment files: a
	// segment in the middle of the log was deleted or renamed. It matches
	// ErrCorrupt.
	errMissingSegment = errors.New("journal: missing segment")
	// ErrNotFound reports a stream sequence or a time past the end of the
	// log.
	ErrNotFound = errors.New("journal: not found")
	// ErrNotDurable reports a Commit (or an Append) under FlushEveryCommit
	// whose sync failed after the record was published: the record IS
	// committed (readers see it, its sequence number is used, a process
	// crash keeps it), but it is not known durable (a machine crash may
	// lose it). Do not append it again: that would record it twice. Flush
	// syncs again; after a write-back error the system may have dropped
	// the failed pages' state, so a later Flush that succeeds is no proof
	// either. The error names the record's position, stream and sequence
	// and wraps the sync's error.
	ErrNotDurable = errors.New("journal: record committed, not known durable")
	// ErrReadersFull reports that every slot of the reader registry is
	// held by a live reader: a Tailer of a read-only journal cannot
	// register.
	ErrReadersFull = journalfile.ErrReadersFull
)

// corruptError is the error for a bad record: where it is and why.
type corruptError struct {
	Position int64  // the record's position in the log
	Segment  string // the segment file's path
	Reason   string // what check failed
}

func (e *corruptError) Error() string {
	where := ""
	if e.Segment != "" {
		where = " in " + e.Segment
	}
	return "journal: corrupt record at position " + strconv.FormatInt(e.Position, 10) + where + ": " + e.Reason
}

// Is makes a *corruptError match ErrCorrupt (and so duty.ErrCorrupt).
func (e *corruptError) Is(target error) bool {
	return target == ErrCorrupt || errors.Is(ErrCorrupt, target)
}
