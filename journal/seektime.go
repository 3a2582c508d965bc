package journal

import (
	"errors"

	"github.com/dutyrt/duty/internal/journalfile"
)

// SeekTime moves the Tailer to the first record stamped at or after ts
// (ns since the Unix epoch). ErrNotFound if no record that late is in the
// log yet.
//
// It finds the segment to start from by binary search over the segments'
// first records (one header read per probe), then walks that segment and
// what follows: O(log segments + one segment), not a walk of the log.
// That relies on timestamps that do not go back (Options.Clock's, or the
// appender's ClaimAt): where they do, the record found is one stamped at
// or after ts, not necessarily the first.
func (t *Tailer) SeekTime(ts int64) error {
	if t.closed {
		return ErrClosed
	}
	start, err := t.j.segmentForTime(ts)
	if err == nil {
		err = t.seekTo(start + journalfile.SegmentHeaderLength)
	}
	retried := false
	for {
		var rec Record
		var ok bool
		if err == nil {
			rec, ok, err = t.Next()
		}
		if errors.Is(err, ErrBehindRetention) && !retried {
			// The segment went while we looked: from the oldest kept.
			retried, err = true, t.SeekStart()
			continue
		}
		if err != nil {
			return err
		}
		if !ok {
			return ErrNotFound
		}
		if rec.Timestamp >= ts {
			return t.seekTo(rec.Position)
		}
	}
}

// segmentForTime returns the start of the last segment whose first record
// is stamped before ts (the first record stamped at or after ts is in it
// or after it), or the oldest segment's when none is.
func (j *Journal) segmentForTime(ts int64) (int64, error) {
	starts, err := journalfile.ListSegments(j.dir, false)
	if err != nil {
		return 0, err
	}
	first := j.firstPosition() - journalfile.SegmentHeaderLength
	for len(starts) > 0 && starts[0] < first {
		starts = starts[1:] // deleted by retention since the listing, or about to be
	}
	if len(starts) == 0 {
		return first, nil
	}
	lo, hi := 0, len(starts)-1 // starts[lo] is always a valid answer
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		stamp, ok := j.firstStamp(starts[mid])
		if ok && stamp < ts {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return starts[lo], nil
}

// firstStamp returns the timestamp of the first record of the segment at
// start; ok is false when it has none (yet) or cannot be read.
func (j *Journal) firstStamp(start int64) (int64, bool) {
	s, err := j.acquire(start)
	if err != nil {
		return 0, false
	}
	defer s.Release()
	off := int64(journalfile.SegmentHeaderLength)
	for off < int64(len(s.Data)) {
		if s.Length(off) == 0 { // acquire: pairs with Commit's release store
			return 0, false
		}
		h, _, kind, err := journalfile.DecodeSlot(s.Data[off:], false)
		if err != nil {
			return 0, false
		}
		switch kind {
		case journalfile.SlotRecord:
			return h.Timestamp, true
		case journalfile.SlotPad:
			off += journalfile.SlotLength(h)
		default: // empty, or the end marker
			return 0, false
		}
	}
	return 0, false
}
