package journal

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/dutyrt/duty/internal/atomicbuf"
)

// Record is a record read by a Tailer. Body aliases the segment's mapping
// (zero copy): it is valid until the Tailer's next call, and reads zeros
// (never faults) if the mapping is revoked under it.
type Record struct {
	RecordHeader
	Position int64 // the record's position in the log
	Body     []byte
}

// Tailer reads the log from a position of its own, and follows the live
// tail. Any number of Tailers may read one Journal, each from one
// goroutine at a time. A Tailer is registered with its Journal until
// Close: retention never deletes the segment it is in or any after it
// (short of the hard size limit).
type Tailer struct {
	j       *Journal
	seg     *segment // held while the tailer is in it
	pos     atomic.Int64
	closed  bool
	noCRC   bool  // the indexer's: framing only, as recovery walked it
	skipped int64 // corrupt records stepped over by Skip
}

// setPos moves the Tailer. pos is atomic only because retention reads it
// (ApplyRetention, under the journal's lock, for the oldest position a
// reader still needs): a release store suffices (a MOV on amd64).
func (t *Tailer) setPos(p int64) { atomicbuf.StoreRelease64(&t.pos, p) }

// NewTailer returns a Tailer at the first record slot still in the journal.
func (j *Journal) NewTailer() (*Tailer, error) {
	t := &Tailer{j: j}
	j.mu.Lock()
	if j.closed.Load() {
		j.mu.Unlock()
		return nil, ErrClosed
	}
	t.setPos(j.first() + SegmentHeaderLength)
	j.tailers[t] = struct{}{}
	j.mu.Unlock()
	return t, nil
}

// Position returns the position of the next record the Tailer reads.
func (t *Tailer) Position() int64 { return t.pos.Load() }

// Close releases the segment the Tailer holds and unregisters it.
func (t *Tailer) Close() error {
	if t.closed {
		return nil
	}
	t.closed = true
	t.j.mu.Lock()
	delete(t.j.tailers, t)
	t.j.mu.Unlock()
	return t.drop()
}

func (t *Tailer) drop() error {
	if t.seg == nil {
		return nil
	}
	err := t.seg.release()
	t.seg = nil
	return err
}

// Next returns the next record, and ok == false when there is none yet
// (the Tailer is at the live tail: call again later). It steps over
// end-of-segment markers and padding. It does not allocate on the path
// that returns a record. Errors: ErrBehindRetention when the Tailer's
// segment has been deleted, ErrReleased when its mapping was revoked, a
// *CorruptError (matching ErrCorrupt) for a record that fails its checks,
// ErrClosed.
func (t *Tailer) Next() (rec Record, ok bool, err error) {
	if t.closed {
		return Record{}, false, ErrClosed
	}
	for {
		p := t.pos.Load()
		start := t.j.segmentStart(p)
		if t.seg == nil || t.seg.start != start {
			if err := t.drop(); err != nil {
				return Record{}, false, err
			}
			s, err := t.j.acquire(start)
			if err == errNotYet {
				return Record{}, false, nil
			}
			if err != nil {
				return Record{}, false, err
			}
			t.seg = s
		}
		s := t.seg
		off := p - start
		if off == 0 { // the end of the previous segment, exactly
			t.setPos(start + SegmentHeaderLength)
			continue
		}
		if s.length(off) == 0 { // acquire: pairs with Commit's release store
			if s.released.Load() {
				return Record{}, false, s.releasedError()
			}
			return Record{}, false, nil
		}
		h, body, kind, derr := decodeSlot(s.data[off:], !t.noCRC)
		if s.released.Load() { // checked after reading: what was read may be zeros
			return Record{}, false, s.releasedError()
		}
		switch {
		case derr != nil && errors.Is(derr, ErrVersion):
			return Record{}, false, fmt.Errorf("journal: record at position %d in %s: %w", p, s.path, derr)
		case derr != nil:
			return Record{}, false, &CorruptError{Position: p, Segment: s.path, Reason: derr.Error()}
		case kind == slotEnd:
			t.setPos(start + t.j.segSize + SegmentHeaderLength)
		case kind == slotPad:
			t.setPos(p + slotLength(h))
		default:
			t.setPos(p + slotLength(h))
			return Record{RecordHeader: h, Position: p, Body: body}, true, nil
		}
	}
}

// Skip steps over the corrupt record at the Tailer's position, the one
// Next reported with a *CorruptError: to the slot after it when its length
// fits in its segment, else to the next segment (whose existence it does
// not check). It returns the new position and counts the skip (Skipped).
// ErrArgument if the record there is not corrupt.
func (t *Tailer) Skip() (int64, error) {
	if t.closed {
		return 0, ErrClosed
	}
	p := t.pos.Load()
	if _, _, err := t.Next(); err == nil || !errors.Is(err, ErrCorrupt) {
		t.setPos(p)
		return 0, fmt.Errorf("%w: no corrupt record at %d (%v)", ErrArgument, p, err)
	}
	s := t.seg // Next left it held: the corrupt record is in it
	start := s.start
	off := p - start
	next := start + t.j.segSize + SegmentHeaderLength
	if length := int64(s.length(off)); length >= RecordHeaderLength && off+align(length) <= t.j.segSize {
		next = p + align(length)
	}
	t.setPos(next)
	t.skipped++
	return next, nil
}

// Skipped returns how many corrupt records Skip stepped over.
func (t *Tailer) Skipped() int64 { return t.skipped }

// SeekStart moves the Tailer to the first record slot still in the
// journal.
func (t *Tailer) SeekStart() error {
	if t.closed {
		return ErrClosed
	}
	t.setPos(t.j.FirstPosition())
	return nil
}

// SeekPosition moves the Tailer to position p, which must be a record's
// position (a Record.Position, a Claim.Position) or the end of the log:
// the segment is walked from its first slot to check it (ErrArgument if p
// falls inside a record).
func (t *Tailer) SeekPosition(p int64) error {
	if t.closed {
		return ErrClosed
	}
	start := t.j.segmentStart(p)
	if p > 0 && p == start { // the end of a full segment: the next one's first slot
		p += SegmentHeaderLength
	}
	if p-start < SegmentHeaderLength || p&(RecordAlignment-1) != 0 {
		return fmt.Errorf("%w: position %d is not a record slot", ErrArgument, p)
	}
	t.setPos(start + SegmentHeaderLength)
	for {
		cur := t.pos.Load()
		if cur == p {
			return nil
		}
		if cur > p || t.j.segmentStart(cur) != start {
			return fmt.Errorf("%w: position %d is not a record boundary", ErrArgument, p)
		}
		_, ok, err := t.Next()
		if err != nil {
			return err
		}
		if !ok && t.pos.Load() != p {
			return fmt.Errorf("%w: position %d is past the end of the log", ErrArgument, p)
		}
	}
}

// SeekSequence moves the Tailer to record seq of streamID: the next
// record Next returns from that stream is that one. It finds the record
// through the stream's index (Lookup: one read), checks that the entry
// names it, and walks the log from its first slot only where the index
// does not have it (a reader in another process ahead of the writer's
// indexer). ErrBehindRetention if the stream's oldest record still in the
// journal is past seq, ErrNotFound if the log holds no such record yet.
func (t *Tailer) SeekSequence(streamID uint32, seq int64) error {
	if t.closed {
		return ErrClosed
	}
	e, err := t.j.Lookup(streamID, seq)
	if errors.Is(err, ErrBehindRetention) {
		return err
	}
	if err == nil {
		t.setPos(e.Position)
		if r, ok, err := t.Next(); err == nil && ok && r.StreamID == streamID && r.Sequence == seq {
			t.setPos(e.Position)
			return nil
		}
		// An entry that does not name the record: walk the log instead.
	}
	return t.seekFirst(func(h RecordHeader) (bool, error) {
		if h.StreamID != streamID {
			return false, nil
		}
		if h.Sequence > seq {
			return false, fmt.Errorf("%w: stream %d sequence %d (oldest kept: %d)", ErrBehindRetention, streamID, seq, h.Sequence)
		}
		return h.Sequence == seq, nil
	})
}

// seekFirst walks from the first slot to the first record match accepts.
func (t *Tailer) seekFirst(match func(RecordHeader) (bool, error)) error {
	if err := t.SeekStart(); err != nil {
		return err
	}
	for {
		rec, ok, err := t.Next()
		if err != nil {
			return err
		}
		if !ok {
			return ErrNotFound
		}
		hit, err := match(rec.RecordHeader)
		if err != nil {
			return err
		}
		if hit {
			t.setPos(rec.Position)
			return nil
		}
	}
}
