package journal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"

	"github.com/dutyrt/duty/internal/journalfile"
	"github.com/dutyrt/duty/internal/mmapfile"
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
	// MissingSegments are the segment files found missing and accepted
	// (RecoverSkip, RecoverTruncate; RecoverStrict fails with the error
	// instead, matching ErrCorrupt: "missing segment"): oldest segments gone without
	// retention, or the segment after the last one's end-of-segment
	// marker. Their records are lost.
	MissingSegments []error
	// ForeignFiles are entries of the index directory that are not the
	// journal's: left alone, and not read.
	ForeignFiles []string
	// HeadersRebuilt are the segment files whose header was all zeros
	// (named before their header was written back, then a machine crash)
	// and was written again from the name and the file's size.
	HeadersRebuilt []string
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
	if r.CheckpointError != nil {
		s += fmt.Sprintf(", checkpoint not used (%v)", r.CheckpointError)
	}
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
	for _, err := range r.MissingSegments {
		s += fmt.Sprintf(", %v", err)
	}
	if len(r.HeadersRebuilt) > 0 {
		s += fmt.Sprintf(", segment headers rebuilt: %v", r.HeadersRebuilt)
	}
	if len(r.ForeignFiles) > 0 {
		s += fmt.Sprintf(", foreign files in the index directory left alone: %v", r.ForeignFiles)
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
//     check, ends the log there if nothing that could have been committed
//     follows it: no valid record after it (a scan of this segment and
//     the later ones, not only the slot its length points to), and the
//     checkpoint not past it. That is the torn tail: its bytes up to the
//     end of the segment are zeroed and later segments removed.
//   - Otherwise it is corruption in the middle: an error naming its
//     position, or skipped or truncated as Options.Recovery says. A
//     failing slot before the checkpoint with nothing valid after it is a
//     checkpoint past the log's end: an error under RecoverStrict; the
//     other modes do not believe the checkpoint (Recovery.CheckpointError)
//     and cut the tail there.
//   - A record walked before the checkpoint had its header read, not its
//     CRC: when the slot after it fails, its CRC is checked, and the
//     damage is named at it if it fails (its length led the walk astray).
func (j *Journal) recover() error {
	r := &j.recovery
	r.TornAt, r.Truncated = -1, -1
	fresh := len(j.segs) == 0
	if fresh {
		s, err := journalfile.CreateSegment(j.dir, 0, j.segSize, j.opts.Clock())
		if err != nil {
			return err
		}
		j.segs = append(j.segs, s)
	}
	first := j.segs[0].Start + journalfile.SegmentHeaderLength
	c, err := journalfile.LoadCheckpoint(j.dir, j.segSize)
	ckpt, flags := c.Flushed, c.Flags
	switch {
	case err != nil && j.opts.Recovery == RecoverStrict:
		return err
	case err != nil:
		r.CheckpointError = err
		ckpt, flags = 0, 0
	case c.Found:
		r.Checkpoint, r.CheckpointFound = ckpt, true
	}
	if err == nil && c.First >= 0 && j.segs[0].Start > c.First {
		// Retention records the oldest segment it keeps in the checkpoint
		// before it deletes anything: these went some other way.
		merr := fmt.Errorf("%w: %w: segments from %d to %d missing (the checkpoint's oldest segment is %d; retention did not delete them)",
			errMissingSegment, ErrCorrupt, c.First, j.segs[0].Start, c.First)
		if j.opts.Recovery == RecoverStrict {
			return merr
		}
		r.MissingSegments = append(r.MissingSegments, merr)
		j.opts.Logger.Warn("journal: segments missing at the start", "dir", j.dir, "err", merr)
	}
	last := j.segs[len(j.segs)-1]
	if ckpt > last.Start+j.segSize {
		err := fmt.Errorf("%w: checkpoint position %d past the last segment's end %d", ErrCorrupt, ckpt, last.Start+j.segSize)
		if j.opts.Recovery == RecoverStrict {
			return err
		}
		r.CheckpointError, r.CheckpointFound, ckpt = err, false, 0
	}
	r.ScanFrom = max(ckpt, first)

	p, i := first, 0
	// prev is the last record walked in segment i, with what its stream's
	// next sequence was before it; prevChecked says its CRC was verified.
	// A record walked before the checkpoint had only its header read: if
	// the slot after it fails, its own length may be what is damaged.
	prev, prevChecked, prevStream, prevNext := int64(-1), true, uint32(0), int64(0)
	for {
		s := j.segs[i]
		off := p - s.Start
		if off == j.segSize { // a record ended exactly at the segment's end
			if i+1 < len(j.segs) {
				i, p, prev = i+1, j.segs[i+1].Start+journalfile.SegmentHeaderLength, -1
				continue
			}
			break
		}
		verify := p >= r.ScanFrom
		h, _, kind, derr := journalfile.DecodeSlot(s.Data[off:], verify)
		if derr == nil && kind == journalfile.SlotRecord {
			if verify {
				r.Verified++
			}
			st := j.stream(h.StreamID)
			prev, prevChecked, prevStream, prevNext = p, verify, h.StreamID, st.next
			st.next = h.Sequence + 1
			p += journalfile.SlotLength(h)
			continue
		}
		if derr == nil && kind == journalfile.SlotPad {
			p += journalfile.SlotLength(h)
			continue
		}
		if derr == nil && kind == journalfile.SlotEnd {
			if i+1 < len(j.segs) {
				i, p, prev = i+1, j.segs[i+1].Start+journalfile.SegmentHeaderLength, -1
				continue
			}
			// The roll puts the next segment in place before it writes the
			// marker: a missing one was lost (a machine crash before its
			// name was synced, or a deletion), with whatever it held.
			merr := fmt.Errorf("%w: %w: segment at %d missing after the end-of-segment marker of %s", errMissingSegment, ErrCorrupt, s.Start+j.segSize, s.Path)
			if j.opts.Recovery == RecoverStrict {
				return merr
			}
			r.MissingSegments = append(r.MissingSegments, merr)
			j.opts.Logger.Warn("journal: last segment missing", "dir", j.dir, "err", merr)
			p = s.Start + j.segSize // the writer makes a new one
			break
		}
		if errors.Is(derr, ErrVersion) {
			return fmt.Errorf("journal: record at position %d in %s: %w", p, s.Path, derr)
		}
		if prev >= 0 && !prevChecked {
			// The walk trusted the previous record's length unverified:
			// if that record fails its CRC, it is where the damage is.
			if _, _, _, perr := journalfile.DecodeSlot(s.Data[prev-s.Start:], true); perr != nil {
				p, off, derr = prev, prev-s.Start, perr
				j.stream(prevStream).next = prevNext
			}
		}
		prev = -1
		// An empty slot or a bad record: the torn tail if nothing that
		// could have been committed follows it, corruption in the middle
		// otherwise. What could have been committed: any valid record
		// after it (in this segment or a later one, found by a scan: a
		// lost page or a damaged length word says nothing about what
		// follows), and anything before the checkpoint.
		var reason string
		if derr != nil {
			reason = derr.Error()
		} else {
			reason = "an empty slot"
		}
		// After a clean Close (or in a new journal) nothing follows the
		// end: no need to read the rest of the segment.
		zeroed := fresh || derr == nil && r.CheckpointFound && flags&journalfile.CkptClean != 0 && p == ckpt
		next := int64(-1)
		if !zeroed {
			next = j.scanValid(i, off)
		}
		if next < 0 && p < ckpt {
			cerr := &corruptError{Position: p, Segment: s.Path, Reason: reason + fmt.Sprintf(", before the checkpoint at %d", ckpt)}
			if j.opts.Recovery == RecoverStrict {
				return cerr
			}
			// Nothing valid follows: the checkpoint names a position past
			// the log's end. It is not believed, and says so.
			r.CheckpointError, r.CheckpointFound, ckpt = fmt.Errorf("checkpoint past the log's end: %w", cerr), false, 0
			j.opts.Logger.Warn("journal: checkpoint past the log's end", "dir", j.dir, "err", cerr)
		}
		if next < 0 {
			if err := j.cutTail(i, p, !zeroed); err != nil {
				return err
			}
			if derr != nil || r.TornBytes > 0 {
				r.TornAt = p
			}
			break
		}
		cerr := &corruptError{Position: p, Segment: s.Path, Reason: reason + fmt.Sprintf(", before a valid record at %d", next)}
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
			if j.segmentStart(next) == s.Start {
				// Padding up to the valid record.
				binary.LittleEndian.PutUint32(s.Data[off+journalfile.MagicOffset:], journalfile.PadMagic)
				s.StoreLength(off, int32(next-p))
				p = next
			} else {
				binary.LittleEndian.PutUint32(s.Data[off+journalfile.MagicOffset:], journalfile.EndMagic)
				s.StoreLength(off, int32(j.segSize-off))
				i, p = i+1, j.segs[i+1].Start+journalfile.SegmentHeaderLength
			}
			if err := journalfile.SyncData(s.Data, off, off+journalfile.EndMarkerLength); err != nil {
				return err
			}
			continue
		}
		break
	}
	r.End = p
	r.Streams = len(j.streams)
	if ckpt > p || flags&journalfile.CkptClean != 0 || r.CheckpointError != nil || !c.Found || c.First != j.segs[0].Start {
		// The log was cut below the checkpoint (RecoverTruncate, reported
		// in Truncated): records appended from p on must be verified at
		// the next Open, so the checkpoint comes back to p. A checkpoint
		// that was not believed (CheckpointError) is replaced. And a clean
		// mark must go before the first claim: a crash from now on is not
		// a clean Close. A journal without a checkpoint, or whose
		// checkpoint does not record its oldest segment, gets one.
		ckpt = min(ckpt, p)
		if err := j.writeCheckpoint(ckpt, 0); err != nil {
			return err
		}
	}
	j.lastCkpt = ckpt
	j.cur = j.segs[i]
	if err := j.cur.Hold(); err != nil {
		return err
	}
	j.pos = p
	j.committed.Store(p)
	j.flushed.Store(min(max(ckpt, first), p))
	j.lastFlush.Store(j.opts.Clock())
	if r.TornAt >= 0 || len(r.Skipped) > 0 || r.Truncated >= 0 || len(r.RemovedSegments) > 0 || r.CheckpointError != nil || len(r.MissingSegments) > 0 {
		j.opts.Logger.Info("journal: recovered", "dir", j.dir, "recovery", r.String())
	}
	return nil
}

// scanValid returns the position of the first valid record after the
// failing or empty slot at off in segment i, in that segment or a later
// one (NextValid), or -1 if there is none. A record of a stream whose
// sequence is below the one the walk has reached is no later record of
// this log (bytes in a torn claim's body, say) and is passed over.
func (j *Journal) scanValid(i int, off int64) int64 {
	from := off + journalfile.RecordAlignment
	for _, s := range j.segs[i:] {
		for o := from; ; o += journalfile.RecordAlignment {
			if o = journalfile.NextValid(s.Data, o); o < 0 {
				break
			}
			h, _, _, _ := journalfile.DecodeSlot(s.Data[o:], true)
			if st := j.streams[h.StreamID]; st == nil || h.Sequence >= st.next {
				return s.Start + o
			}
		}
		from = journalfile.SegmentHeaderLength
	}
	return -1
}

// cutTail ends the log at p in segment i: the segment's bytes from p to
// its last non-zero byte are zeroed and synced (scan false: known to be
// zero already), and later segments are unmapped and removed.
func (j *Journal) cutTail(i int, p int64, scan bool) error {
	r := &j.recovery
	s := j.segs[i]
	off := p - s.Start
	end := off
	if scan {
		end = int64(len(s.Data))
		for end > off && s.Data[end-1] == 0 {
			end--
		}
	}
	if end > off {
		clear(s.Data[off:end])
		r.TornBytes += end - off
		if err := journalfile.SyncData(s.Data, off, end); err != nil {
			return err
		}
	}
	for _, t := range j.segs[i+1:] {
		_ = t.Release()
		if err := os.Remove(t.Path); err != nil {
			return fmt.Errorf("journal: remove %s past the log's end: %w", t.Path, err)
		}
		r.RemovedSegments = append(r.RemovedSegments, t.Path)
	}
	if len(j.segs) > i+1 {
		j.segs = j.segs[:i+1]
		if err := mmapfile.SyncDir(j.dir); err != nil {
			return err
		}
	}
	return nil
}
