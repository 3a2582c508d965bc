package journal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
)

// Recovery reports what Open did to bring the log to a consistent state.
type Recovery struct {
	// Checkpoint is the flushed position the last checkpoint recorded
	// (CheckpointFound false: there was none, or RecoverSkip or
	// RecoverTruncate ignored a bad one, see CheckpointError).
	Checkpoint      int64
	CheckpointFound bool
	CheckpointError error
	// ScanFrom is where CRC verification started: the checkpoint, or the
	// first record slot. Records before it were walked (headers only) to
	// learn each stream's next sequence number.
	ScanFrom int64
	// Verified is the number of records whose CRC was checked.
	Verified int64
	// End is the log's end after recovery: the next record's position.
	End int64
	// TornAt is where a torn tail was cut off (-1: none); TornBytes is the
	// number of bytes from there to the last non-zero byte of the segment
	// that were zeroed.
	TornAt    int64
	TornBytes int64
	// RemovedSegments are the files deleted past the log's end (segments
	// created before the crash and never written, or past a truncation).
	RemovedSegments []string
	// Skipped are the positions of corrupt records replaced by padding
	// (RecoverSkip); Truncated is the position RecoverTruncate cut the log
	// at a corrupt record (-1: none).
	Skipped   []int64
	Truncated int64
	// Streams is the number of streams seen.
	Streams int
	// IndexRebuilt says the stream indexes were missing or disagreed with
	// the log and were rebuilt from it; IndexedFrom is where indexing
	// resumed (the log's first slot after a rebuild); Indexed is the number
	// of records Open indexed.
	IndexRebuilt bool
	IndexedFrom  int64
	Indexed      int64
	// ReadersReplaced is what was wrong with a damaged reader registry
	// that Open replaced by an empty one (RecoverSkip, RecoverTruncate;
	// RecoverStrict fails instead); ReadersReclaimed counts the slots of
	// dead readers Open freed.
	ReadersReplaced  error
	ReadersReclaimed int
}

func (r Recovery) String() string {
	s := fmt.Sprintf("scan from %d, %d records verified, end %d", r.ScanFrom, r.Verified, r.End)
	if r.TornAt >= 0 {
		s += fmt.Sprintf(", torn tail at %d (%d bytes zeroed)", r.TornAt, r.TornBytes)
	}
	if len(r.Skipped) > 0 {
		s += fmt.Sprintf(", %d corrupt records skipped", len(r.Skipped))
	}
	if r.Truncated >= 0 {
		s += fmt.Sprintf(", truncated at corrupt record %d", r.Truncated)
	}
	if len(r.RemovedSegments) > 0 {
		s += fmt.Sprintf(", %d segments removed", len(r.RemovedSegments))
	}
	if r.IndexRebuilt {
		s += ", indexes rebuilt"
	}
	if r.ReadersReplaced != nil {
		s += fmt.Sprintf(", reader registry replaced (%v)", r.ReadersReplaced)
	}
	if r.ReadersReclaimed > 0 {
		s += fmt.Sprintf(", %d dead readers' slots reclaimed", r.ReadersReclaimed)
	}
	return s
}

// recover brings a writer's log to a consistent end. The rules
// (docs/journal.md, "Recovery"):
//
//   - The walk starts at the first record slot. Before the checkpoint it
//     reads headers only (to learn each stream's next sequence); from the
//     checkpoint on it verifies CRCs.
//   - A slot that is empty (zero length word), or whose record fails a
//     check, ends the log there if nothing valid follows it: it is the torn
//     tail. Its bytes up to the end of the segment are zeroed and later
//     segments removed.
//   - A failing record that a valid record follows (the next slot after it,
//     or the first slot of a later segment) is corruption in the middle:
//     an error naming its position, or skipped or truncated as
//     Options.Recovery says.
func (j *Journal) recover() error {
	r := &j.recovery
	r.TornAt, r.Truncated = -1, -1
	fresh := len(j.segs) == 0
	if fresh {
		s, err := createSegment(j.dir, 0, j.segSize, j.opts.Clock())
		if err != nil {
			return err
		}
		j.segs = append(j.segs, s)
	}
	first := j.segs[0].start + SegmentHeaderLength
	ckpt, flags, found, err := readCheckpoint(j.dir, j.segSize)
	switch {
	case err != nil && j.opts.Recovery == RecoverStrict:
		return err
	case err != nil:
		r.CheckpointError = err
	case found:
		r.Checkpoint, r.CheckpointFound = ckpt, true
	}
	last := j.segs[len(j.segs)-1]
	if ckpt > last.start+j.segSize {
		err := fmt.Errorf("%w: checkpoint position %d past the last segment's end %d", ErrCorrupt, ckpt, last.start+j.segSize)
		if j.opts.Recovery == RecoverStrict {
			return err
		}
		r.CheckpointError, r.CheckpointFound, ckpt = err, false, 0
	}
	r.ScanFrom = max(ckpt, first)

	p, i := first, 0
	for {
		s := j.segs[i]
		off := p - s.start
		if off == j.segSize { // a record ended exactly at the segment's end
			if i+1 < len(j.segs) {
				i, p = i+1, j.segs[i+1].start+SegmentHeaderLength
				continue
			}
			break
		}
		verify := p >= r.ScanFrom
		h, _, kind, derr := decodeSlot(s.data[off:], verify)
		if derr == nil && kind == slotRecord {
			if verify {
				r.Verified++
			}
			j.stream(h.StreamID).next = h.Sequence + 1
			p += slotLength(h)
			continue
		}
		if derr == nil && kind == slotPad {
			p += slotLength(h)
			continue
		}
		if derr == nil && kind == slotEnd {
			if i+1 < len(j.segs) {
				i, p = i+1, j.segs[i+1].start+SegmentHeaderLength
				continue
			}
			p = s.start + j.segSize // the next segment was lost: the writer makes a new one
			break
		}
		if errors.Is(derr, ErrVersion) {
			return fmt.Errorf("journal: record at position %d in %s: %w", p, s.path, derr)
		}
		// An empty slot or a bad record: the tail, or corruption in the
		// middle if something valid follows.
		var reason string
		if derr != nil {
			reason = derr.Error()
		} else {
			reason = "an empty slot"
		}
		next := j.validAfter(i, off, derr == nil)
		if next < 0 {
			// After a clean Close (or in a new journal) nothing follows
			// the end: no need to read the rest of the segment.
			zeroed := fresh || derr == nil && r.CheckpointFound && flags&ckptClean != 0 && p == ckpt
			if err := j.cutTail(i, p, !zeroed); err != nil {
				return err
			}
			if derr != nil || r.TornBytes > 0 {
				r.TornAt = p
			}
			break
		}
		cerr := &CorruptError{Position: p, Segment: s.path, Reason: reason + fmt.Sprintf(" before a valid record at %d", next)}
		switch j.opts.Recovery {
		case RecoverStrict:
			return cerr
		case RecoverTruncate:
			r.Truncated = p
			if err := j.cutTail(i, p, true); err != nil {
				return err
			}
			j.opts.Logger.Warn("journal: truncated at a corrupt record", "dir", j.dir, "err", cerr)
		case RecoverSkip:
			r.Skipped = append(r.Skipped, p)
			j.opts.Logger.Warn("journal: skipping a corrupt record", "dir", j.dir, "err", cerr)
			if next > p && j.segmentStart(next) == s.start {
				// Padding up to the valid record.
				binary.LittleEndian.PutUint32(s.data[off+magicOffset:], PadMagic)
				s.storeLength(off, int32(next-p))
				p = next
			} else {
				binary.LittleEndian.PutUint32(s.data[off+magicOffset:], EndMagic)
				s.storeLength(off, int32(j.segSize-off))
				i, p = i+1, j.segs[i+1].start+SegmentHeaderLength
			}
			if err := syncRange(s.data, off, off+EndMarkerLength); err != nil {
				return err
			}
			continue
		}
		break
	}
	r.End = p
	r.Streams = len(j.streams)
	if ckpt > p || flags&ckptClean != 0 {
		// The log was cut below the checkpoint (RecoverTruncate, or a tail
		// lost in spite of it): records appended from p on must be verified
		// at the next Open, so the checkpoint comes back to p. And a clean
		// mark must go before the first claim: a crash from now on is not
		// a clean Close.
		ckpt = min(ckpt, p)
		if err := j.writeCheckpoint(ckpt, 0); err != nil {
			return err
		}
	}
	j.lastCkpt = ckpt
	j.cur = j.segs[i]
	if err := j.cur.hold(); err != nil {
		return err
	}
	j.pos = p
	j.committed.Store(p)
	j.written.Store(p)
	j.flushed.Store(min(max(ckpt, first), p))
	j.lastFlush.Store(j.opts.Clock())
	if r.TornAt >= 0 || len(r.Skipped) > 0 || r.Truncated >= 0 || len(r.RemovedSegments) > 0 {
		j.opts.Logger.Info("journal: recovered", "dir", j.dir, "recovery", r.String())
	}
	return nil
}

// validAfter returns the position of a valid record after the failing or
// empty slot at off in segment i: the slot right after it (when its
// length can be trusted: trust), or the first slot of any later segment.
// It returns -1 if there is none.
func (j *Journal) validAfter(i int, off int64, empty bool) int64 {
	s := j.segs[i]
	if !empty {
		length := int64(int32(binary.LittleEndian.Uint32(s.data[off:])))
		if length >= RecordHeaderLength {
			if n := off + align(length); n < j.segSize {
				if _, _, kind, err := decodeSlot(s.data[n:], true); err == nil && kind == slotRecord {
					return s.start + n
				}
			}
		}
	}
	for _, t := range j.segs[i+1:] {
		if _, _, kind, err := decodeSlot(t.data[SegmentHeaderLength:], true); err == nil && kind == slotRecord {
			return t.start + SegmentHeaderLength
		}
	}
	return -1
}

// cutTail ends the log at p in segment i: the segment's bytes from p to
// its last non-zero byte are zeroed and synced (scan false: known to be
// zero already), and later segments are unmapped and removed.
func (j *Journal) cutTail(i int, p int64, scan bool) error {
	r := &j.recovery
	s := j.segs[i]
	off := p - s.start
	end := off
	if scan {
		end = int64(len(s.data))
		for end > off && s.data[end-1] == 0 {
			end--
		}
	}
	if end > off {
		clear(s.data[off:end])
		r.TornBytes += end - off
		if err := syncRange(s.data, off, end); err != nil {
			return err
		}
	}
	for _, t := range j.segs[i+1:] {
		_ = t.release()
		if err := os.Remove(t.path); err != nil {
			return fmt.Errorf("journal: remove %s past the log's end: %w", t.path, err)
		}
		r.RemovedSegments = append(r.RemovedSegments, t.path)
	}
	if len(j.segs) > i+1 {
		j.segs = j.segs[:i+1]
		if err := syncDir(j.dir); err != nil {
			return err
		}
	}
	return nil
}
