package journal

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/dutyrt/duty/internal/atomicbuf"
	"github.com/dutyrt/duty/internal/journalfile"
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
// goroutine at a time. A Tailer is registered until Close, in the
// journal's reader registry (internal/journalfile) whatever its process, and with
// its Journal: retention never deletes the segment it is in or any after
// it (short of the hard size limit).
type Tailer struct {
	j       *Journal
	seg     *journalfile.Segment // held while the tailer is in it
	pos     atomic.Int64
	closed  bool
	noCRC   bool  // the indexer's: framing only, as recovery walked it
	skipped int64 // corrupt records stepped over by Skip
	// idle counts the polls that found the first slot of the segment
	// empty (a read-only journal): every 256th checks that the file
	// under the segment's name is still the one mapped.
	idle uint32

	// The registry: slot and word are the Tailer's slot and its claim
	// word, pub and updated the slot's position and time words (pub nil:
	// no slot); floor and proposed are the registry's words (nil: no
	// registry). They point into the shared mapping.
	reg      *journalfile.Registry
	slot     int
	word     uint64
	pub      *atomic.Int64
	updated  *atomic.Int64
	floor    *atomic.Int64
	proposed *atomic.Int64
}

// setPos moves the Tailer forward (Next). Release stores (a MOV on
// amd64): the position, which in-process retention reads under the
// journal's lock, and its copy in the registry slot, which the writer's
// retention loads (acquire) in any process. Moving forward only lets
// segments go, so nothing stronger is needed; moving back is seekTo.
func (t *Tailer) setPos(p int64) {
	atomicbuf.StoreRelease64(&t.pos, p)
	if t.pub != nil {
		atomicbuf.StoreRelease64(t.pub, p)
	}
}

// seekTo moves the Tailer to p, backward too. The slot's position is
// stored first (sequentially consistent), then the registry's proposed
// floor is loaded: either the writer's retention scan sees p, or this
// load sees its proposal (registry.register has the argument). A p
// before the proposal is ErrBehindRetention: its segment may be gone.
func (t *Tailer) seekTo(p int64) error {
	t.pos.Store(p)
	if t.pub == nil {
		return nil
	}
	t.pub.Store(p)
	t.updated.Store(t.j.opts.Clock())
	if f := t.proposed.Load(); t.j.segmentStart(p) < f {
		return fmt.Errorf("%w: position %d, retention keeps from %d", ErrBehindRetention, p, f)
	}
	return nil
}

// NewTailer returns a Tailer at the first record slot still in the
// journal, registered in the reader registry. ErrReadersFull (in a
// read-only journal) if every slot is held by a live reader; a Tailer in
// the writer's process then goes unregistered in the file, held back by
// its Journal alone.
func (j *Journal) NewTailer() (*Tailer, error) {
	t := &Tailer{j: j, slot: -1}
	j.mu.Lock()
	if j.closed.Load() {
		j.mu.Unlock()
		return nil, ErrClosed
	}
	p := j.first() + journalfile.SegmentHeaderLength
	t.pos.Store(p)
	if r := j.reg; r != nil {
		t.reg, t.floor, t.proposed = r, r.Floor(), r.Proposed()
		slot, word, err := r.Register(p, j.opts.ReaderName, j.opts.Clock())
		switch {
		case err == nil:
			t.slot, t.word = slot, word
			t.pub, t.updated = r.Word(slot, journalfile.SlPositionOffset), r.Word(slot, journalfile.SlUpdatedOffset)
		case j.readOnly:
			j.mu.Unlock()
			return nil, err
		default:
			j.opts.Logger.Warn("journal: Tailer not in the reader registry", "err", err)
		}
	}
	j.tailers[t] = struct{}{}
	j.mu.Unlock()
	if err := t.SeekStart(); err != nil {
		_ = t.Close()
		return nil, err
	}
	return t, nil
}

// Position returns the position of the next record the Tailer reads.
func (t *Tailer) Position() int64 { return t.pos.Load() }

// Close releases the segment the Tailer holds and unregisters it: its
// registry slot is free at once.
func (t *Tailer) Close() error {
	if t.closed {
		return nil
	}
	t.closed = true
	t.j.mu.Lock()
	delete(t.j.tailers, t)
	if t.pub != nil {
		t.reg.Free(t.slot, t.word) // under j.mu: Journal.Close unmaps under it
		t.pub = nil
	}
	t.j.mu.Unlock()
	return t.drop()
}

func (t *Tailer) drop() error {
	if t.seg == nil {
		return nil
	}
	err := t.seg.Release()
	t.seg = nil
	return err
}

// Next returns the next record, and ok == false when there is none yet
// (the Tailer is at the live tail: call again later). It steps over
// end-of-segment markers and padding. It does not allocate on the path
// that returns a record. Errors: ErrBehindRetention when the Tailer's
// segment has been deleted, ErrReleased when its mapping was revoked, a
// an error matching ErrCorrupt (naming its position) for a record that fails its checks,
// ErrClosed.
func (t *Tailer) Next() (rec Record, ok bool, err error) {
	if t.closed {
		return Record{}, false, ErrClosed
	}
	for {
		p := t.pos.Load()
		start := t.j.segmentStart(p)
		// One acquire load: a registered reader's segment is deleted only
		// past the hard size limit, and then the writer has moved the
		// floor past it first, whatever the reader's process.
		if t.floor != nil {
			if f := t.floor.Load(); start < f {
				return Record{}, false, fmt.Errorf("%w: %w: position %d, retention deleted the segments before %d",
					ErrBehindRetention, ErrReleased, p, f)
			}
		}
		if t.seg == nil || t.seg.Start != start {
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
			t.seg, t.idle = s, 0
			if t.updated != nil {
				t.updated.Store(t.j.opts.Clock())
			}
		}
		s := t.seg
		off := p - start
		if off == 0 { // the end of the previous segment, exactly
			t.setPos(start + journalfile.SegmentHeaderLength)
			continue
		}
		if s.Length(off) == 0 { // acquire: pairs with Commit's release store
			if s.Released.Load() {
				return Record{}, false, s.ReleasedError()
			}
			if off == journalfile.SegmentHeaderLength && t.j.readOnly {
				// Waiting at a segment's first slot: acquire checked the
				// file when the Tailer entered; a writer's recovery may
				// replace it while it waits (remapIfReplaced). A stat
				// every 256 polls here, none elsewhere.
				if t.idle++; t.idle&255 == 0 {
					replaced, err := t.j.segmentReplaced(s)
					if err != nil {
						return Record{}, false, err
					}
					if replaced {
						if err := t.drop(); err != nil {
							return Record{}, false, err
						}
						continue
					}
				}
			}
			return Record{}, false, nil
		}
		// The CRC guards what came from disk; what this process's writer
		// committed never left its memory through a crash (trustFrom).
		verify := !t.noCRC && p < t.j.trustFrom
		if !verify { // a record's header, checked in place; anything else below
			if h, ok := journalfile.RecordAt(s.At(off), t.j.segSize-off); ok {
				end := off + int64(h.Length)
				body := s.Data[off+journalfile.RecordHeaderLength : end : end]
				if s.Released.Load() { // checked after reading: what was read may be zeros
					return Record{}, false, s.ReleasedError()
				}
				t.setPos(p + journalfile.Align(int64(h.Length)))
				return Record{RecordHeader: h, Position: p, Body: body}, true, nil
			}
		}
		h, body, kind, derr := journalfile.DecodeSlot(s.Data[off:], verify)
		if s.Released.Load() { // checked after reading: what was read may be zeros
			return Record{}, false, s.ReleasedError()
		}
		switch {
		case derr != nil && errors.Is(derr, ErrVersion):
			return Record{}, false, fmt.Errorf("journal: record at position %d in %s: %w", p, s.Path, derr)
		case derr != nil:
			return Record{}, false, &corruptError{Position: p, Segment: s.Path, Reason: derr.Error()}
		case kind == journalfile.SlotEnd:
			t.setPos(start + t.j.segSize + journalfile.SegmentHeaderLength)
		case kind == journalfile.SlotPad:
			t.setPos(p + journalfile.SlotLength(h))
		default:
			t.setPos(p + journalfile.SlotLength(h))
			return Record{RecordHeader: h, Position: p, Body: body}, true, nil
		}
	}
}

// Skip steps over the corrupt record at the Tailer's position, the one
// Next reported as corrupt. Its length word is not trusted
// alone: Skip goes to the slot that length points to only when that slot
// holds a valid record, padding or the end-of-segment marker; otherwise
// to the first valid record after the corrupt one in its segment (a scan
// of aligned slots, each checked with its CRC); with none, to the slot
// the length points to if it lies in the segment and is empty (the live
// tail: what the writer appends next), else to the next segment (whose
// existence it does not check). It returns the new position and counts
// the skip (Skipped). ErrArgument if the record there is not corrupt.
func (t *Tailer) Skip() (int64, error) {
	if t.closed {
		return 0, ErrClosed
	}
	p := t.pos.Load()
	if _, _, err := t.Next(); err == nil || !errors.Is(err, ErrCorrupt) {
		if serr := t.seekTo(p); serr != nil {
			return 0, serr
		}
		return 0, fmt.Errorf("%w: no corrupt record at %d (%v)", ErrArgument, p, err)
	}
	s := t.seg // Next left it held: the corrupt record is in it
	start := s.Start
	off := p - start
	next := start + t.j.segSize + journalfile.SegmentHeaderLength
	pointed := int64(-1) // the slot the length word points to, if in the segment
	if length := int64(s.Length(off)); length >= journalfile.RecordHeaderLength && off+journalfile.Align(length) <= t.j.segSize {
		pointed = off + journalfile.Align(length)
	}
	switch {
	case pointed == t.j.segSize:
		// The record would end the segment exactly: the next one's first
		// slot, unless the scan finds a record here.
		if o := journalfile.NextValid(s.Data, off+journalfile.RecordAlignment); o >= 0 {
			next = start + o
		}
	case pointed > 0 && validSlot(s.Data[pointed:]):
		next = start + pointed
	default:
		if o := journalfile.NextValid(s.Data, off+journalfile.RecordAlignment); o >= 0 {
			next = start + o
		} else if pointed > 0 && s.Length(pointed) == 0 {
			next = start + pointed
		}
	}
	if s.Released.Load() { // what was scanned may be zeros
		return 0, s.ReleasedError()
	}
	t.setPos(next)
	t.skipped++
	return next, nil
}

// validSlot reports whether b starts with a record whose header and CRC
// check, padding or the end-of-segment marker.
func validSlot(b []byte) bool {
	_, _, kind, err := journalfile.DecodeSlot(b, true)
	return err == nil && kind != journalfile.SlotEmpty
}

// Skipped returns how many corrupt records Skip stepped over.
func (t *Tailer) Skipped() int64 { return t.skipped }

// SeekStart moves the Tailer to the first record slot still in the
// journal.
func (t *Tailer) SeekStart() error {
	if t.closed {
		return ErrClosed
	}
	p := t.j.firstPosition()
	for attempt := 0; ; attempt++ {
		err := t.seekTo(p)
		if err == nil || !errors.Is(err, ErrBehindRetention) {
			return err
		}
		// Retention is cutting before p: start after its cut instead. The
		// word comes from a shared file: one that is no segment start, or
		// that keeps moving, is not believed.
		f := t.proposed.Load()
		if attempt == 8 || f < 0 || f&(t.j.segSize-1) != 0 || f > journalfile.MaxPosition {
			return fmt.Errorf("%w: reader registry: retention floor %d", ErrCorrupt, f)
		}
		p = max(p, f+journalfile.SegmentHeaderLength)
	}
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
		p += journalfile.SegmentHeaderLength
	}
	if p-start < journalfile.SegmentHeaderLength || p&(journalfile.RecordAlignment-1) != 0 {
		return fmt.Errorf("%w: position %d is not a record slot", ErrArgument, p)
	}
	if err := t.seekTo(start + journalfile.SegmentHeaderLength); err != nil {
		return err
	}
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
		if err := t.seekTo(e.Position); err != nil {
			return err
		}
		if r, ok, err := t.Next(); err == nil && ok && r.StreamID == streamID && r.Sequence == seq {
			return t.seekTo(e.Position)
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
			return t.seekTo(rec.Position)
		}
	}
}
