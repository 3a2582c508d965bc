package journal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"unsafe"

	"github.com/dutyrt/duty/internal/atomicbuf"
	"github.com/dutyrt/duty/internal/journalfile"
	"github.com/dutyrt/duty/internal/prefetch"
)

// claimState is the writer's outstanding claim.
type claimState struct {
	off    int64   // offset in cur
	length int64   // header and body
	stream *Stream // advanced by Commit
	// The header's fields, written by Commit with the CRC and the length
	// (see ClaimAt).
	typeID    int32
	flags     uint32
	seq       int64
	timestamp int64
}

// Claim is a slot of the log, reserved by Journal.Claim: fill its Body,
// then Commit (or Abort).
//
// A Claim is four words, so that the compiler keeps the one ClaimAt
// returns in registers: a larger result is written to the stack and
// copied, and the copy's wide loads of the narrow stores just made stall
// the appender on every record. The body is therefore a method, not a
// slice field.
type Claim struct {
	// Position is the record's position in the log.
	Position int64
	// Sequence is the record's sequence number within its stream.
	Sequence int64
	body     *byte
	n        int
}

// Body returns the record's body, aliasing the segment's mapping: write it
// in place (zero copy). It must not be used after Commit or Abort.
func (c Claim) Body() []byte { return unsafe.Slice(c.body, c.n) }

// MaxBody returns the largest body a record can have: a record never spans
// segments.
func (j *Journal) MaxBody() int {
	return int(min(j.segSize-journalfile.SegmentHeaderLength, math.MaxInt32&^(journalfile.RecordAlignment-1)) - journalfile.RecordHeaderLength)
}

// Stream is the writer's handle on one stream: it holds the stream's next
// sequence number, so that its Claim looks nothing up. Get it once with
// Journal.Stream and claim through it on the appender's hot path. Like
// the Journal's writer methods, it is for the writer's goroutine only.
type Stream struct {
	j    *Journal
	id   uint32
	next int64 // the next record's sequence number
	// The CRC of the header words its records share (magic, stream,
	// type, flags) for the last type and flags committed: Commit
	// continues from it. prefixSet is false until the first commit.
	prefixType  int32
	prefixFlags uint32
	prefixCRC   uint32
	prefixSet   bool
}

// Stream returns the writer's handle on streamID, creating the stream's
// state the first time (the only allocation, once per stream). Every call
// for one id returns the same handle.
func (j *Journal) Stream(streamID uint32) (*Stream, error) {
	if j.readOnly {
		return nil, ErrReadOnly
	}
	return j.stream(streamID), nil
}

// stream returns streamID's handle, creating it if needed.
func (j *Journal) stream(streamID uint32) *Stream {
	s := j.streams[streamID]
	if s == nil {
		s = &Stream{j: j, id: streamID}
		j.streams[streamID] = s
	}
	return s
}

// streamID returns the stream's id.
func (s *Stream) streamID() uint32 { return s.id }

// NextSequence returns the sequence number the stream's next record will
// get.
func (s *Stream) NextSequence() int64 { return s.next }

// Claim is Journal.Claim on this stream, stamped with Options.Clock.
func (s *Stream) Claim(typeID int32, n int) (Claim, error) {
	return s.ClaimAt(typeID, n, s.j.opts.Clock())
}

// ClaimAt is Claim with the record's timestamp given (ns since the Unix
// epoch) instead of read from Options.Clock: the appender that already
// knows the time (a duty cycle's cached clock, a message's own
// timestamp) saves a clock read per record. Readers' SeekTime and a paced
// Replayer expect timestamps that do not go back.
func (s *Stream) ClaimAt(typeID int32, n int, timestamp int64) (Claim, error) {
	j := s.j
	if j.claimOpen || j.closed.Load() {
		return Claim{}, j.claimError()
	}
	if uint(n) > uint(j.maxBody) {
		return Claim{}, fmt.Errorf("%w: body of %d bytes (at most %d)", ErrArgument, n, j.maxBody)
	}
	length := int64(journalfile.RecordHeaderLength + n)
	aligned := journalfile.Align(length)
	off := j.pos - j.cur.Start
	if off+aligned > j.segSize {
		if err := j.roll(); err != nil {
			return Claim{}, err
		}
		off = j.pos - j.cur.Start
	}
	seq := s.next
	// The header is written by Commit, not here: a reader of this
	// process spinning on the record's length word shares its cache line,
	// and stores to that line now and again at the commit would each take
	// the line back from the reader; written at the commit, the header,
	// its CRC and the length go in one burst. off+aligned <= segSize: the
	// record lies inside the mapping.
	rec := j.cur.At(off)
	// The record's lines and the next few, asked for in a state this
	// core may write: a Tailer spinning at the tail holds the line of the
	// length word it polls, and its core reads ahead into the lines
	// after; with them on their way at the claim, the caller's stores and
	// the commit's CRC loads of those bytes do not each wait for a line
	// to come back from the reader's core. Every claim asks again: the
	// reader takes them back as it reads. A hint only: it never changes
	// memory, and past the mapping's end it is dropped.
	prefetch.WriteLines(rec, prefetch.BlockSize)
	j.claimOpen = true
	j.claim.off, j.claim.length = off, length
	j.claim.typeID, j.claim.flags, j.claim.seq, j.claim.timestamp = typeID, 0, seq, timestamp
	if j.claim.stream != s { // a pointer store costs a write barrier's check: only on a change
		j.claim.stream = s
	}
	body := (*byte)(unsafe.Add(rec, journalfile.RecordHeaderLength))
	return Claim{Position: j.pos, Sequence: seq, body: body, n: n}, nil
}

// Append is Journal.Append on this stream.
func (s *Stream) Append(typeID int32, body []byte) (position, sequence int64, err error) {
	return s.appendCopy(typeID, body, s.j.opts.Clock())
}

// Claim reserves a record of n body bytes on streamID with typeID and
// returns its slot (Commit writes the record's header). It moves to a new
// segment first if the record does not fit in the current one (closing it
// with an end-of-segment marker). It does not
// allocate, except the first time it sees a stream. Writer only; one
// claim at a time (ErrClaim). A Stream's Claim saves the stream lookup.
func (j *Journal) Claim(streamID uint32, typeID int32, n int) (Claim, error) {
	if j.readOnly {
		return Claim{}, ErrReadOnly
	}
	return j.stream(streamID).ClaimAt(typeID, n, j.opts.Clock())
}

// claimError is why a claim is refused: the journal is closed, or a
// claim is outstanding.
func (j *Journal) claimError() error {
	if j.closed.Load() {
		return ErrClosed
	}
	return fmt.Errorf("%w: a claim is outstanding", ErrClaim)
}

// Commit publishes the outstanding claim: it stores the CRC, then the
// length word (a release store, which readers load with acquire), and
// advances the committed position. Under FlushEveryCommit it then syncs
// the record's pages and returns once they are durable. The record is
// published before the sync: if the sync fails, Commit returns an error
// matching ErrNotDurable, and the record is committed all the same (do
// not commit it again). Any other error means nothing was committed. It
// does not allocate (but on that error path).
func (j *Journal) Commit() error {
	if !j.claimOpen {
		return fmt.Errorf("%w: commit without a claim", ErrClaim)
	}
	c := &j.claim
	// ClaimAt checked that the record lies inside the mapping.
	p := j.cur.At(c.off)
	h := (*[journalfile.RecordHeaderLength]byte)(p)
	le := binary.LittleEndian
	le.PutUint32(h[journalfile.MagicOffset:], journalfile.RecordMagic)
	le.PutUint32(h[journalfile.StreamOffset:], c.stream.id)
	le.PutUint32(h[journalfile.TypeOffset:], uint32(c.typeID))
	le.PutUint32(h[journalfile.FlagsOffset:], c.flags)
	le.PutUint64(h[journalfile.SequenceOffset:], uint64(c.seq))
	le.PutUint64(h[journalfile.TimestampOffset:], uint64(c.timestamp))
	s := c.stream
	if !s.prefixSet || s.prefixType != c.typeID || s.prefixFlags != c.flags {
		s.prefixType, s.prefixFlags, s.prefixSet = c.typeID, c.flags, true
		s.prefixCRC = journalfile.HeaderPrefixCRC(s.id, c.typeID, c.flags)
	}
	crc := journalfile.PrefixedRecordCRC(s.prefixCRC, unsafe.Slice((*byte)(p), c.length))
	le.PutUint32(h[journalfile.CrcOffset:], crc)
	j.cur.StoreLength(c.off, int32(c.length))
	pos := j.pos
	j.pos += journalfile.Align(c.length)
	c.stream.next++
	j.claimOpen = false
	// Release store: Flush, loading committed with acquire, syncs up to
	// here (msync takes the pages from the page cache, where the record's
	// bytes are).
	atomicbuf.StoreRelease64(&j.committed, j.pos)
	if j.opts.Flush == FlushEveryCommit {
		if err := j.flush(false, false); err != nil {
			return fmt.Errorf("%w: position %d, stream %d, sequence %d: %w", ErrNotDurable, pos, c.stream.id, c.stream.next-1, err)
		}
	}
	return nil
}

// Abort gives the outstanding claim up: its bytes are zeroed (the region
// past the log's end is always zero, so that no reader mistakes leftovers
// for a record) and the next claim reuses the slot.
func (j *Journal) Abort() error {
	if !j.claimOpen {
		return fmt.Errorf("%w: abort without a claim", ErrClaim)
	}
	c := &j.claim
	clear(j.cur.Data[c.off : c.off+journalfile.Align(c.length)])
	j.claimOpen = false
	return nil
}

// Append claims, fills and commits a record holding a copy of body, and
// returns its position and sequence.
func (j *Journal) Append(streamID uint32, typeID int32, body []byte) (position, sequence int64, err error) {
	if j.readOnly {
		return 0, 0, ErrReadOnly
	}
	return j.stream(streamID).appendCopy(typeID, body, j.opts.Clock())
}

// appendCopy claims, fills with body and commits a record on s, stamped
// timestamp.
func (s *Stream) appendCopy(typeID int32, body []byte, timestamp int64) (position, sequence int64, err error) {
	j := s.j
	c, err := s.ClaimAt(typeID, len(body), timestamp)
	if err != nil {
		return 0, 0, err
	}
	copy(c.Body(), body)
	if err := j.Commit(); err != nil {
		if errors.Is(err, ErrNotDurable) { // committed: where it is
			return c.Position, c.Sequence, err
		}
		return 0, 0, err
	}
	return c.Position, c.Sequence, nil
}

// nextSequence returns the sequence number the next record of streamID
// will get (the writer's view).
func (j *Journal) nextSequence(streamID uint32) int64 {
	if s := j.streams[streamID]; s != nil {
		return s.next
	}
	return 0
}

// roll closes the current segment and moves the writer to the next one:
// the next segment file is put in place first (the one a Flusher
// prepared, or one made here), so that a reader who finds the
// end-of-segment marker always finds the next file; then the marker (the
// bytes left, EndMagic) is written, its length word last.
func (j *Journal) roll() error {
	next := j.cur.Start + j.segSize
	s, err := j.takeNext(next)
	if err != nil {
		return err
	}
	if j.opts.Flush == FlushEveryCommit {
		if err := s.SyncName(); err != nil {
			return err
		}
	}
	if err := s.Hold(); err != nil { // the writer's reference
		return err
	}
	if testHookInRoll != nil {
		testHookInRoll()
	}
	j.mu.Lock()
	j.segs = append(j.segs, s)
	j.mu.Unlock()
	if off := j.pos - j.cur.Start; off < j.segSize {
		binary.LittleEndian.PutUint32(j.cur.Data[off+journalfile.MagicOffset:], journalfile.EndMagic)
		j.cur.StoreLength(off, int32(j.segSize-off))
	}
	old := j.cur
	j.cur = s
	j.pos = next + journalfile.SegmentHeaderLength
	j.committed.Store(j.pos)
	return old.Release()
}

// testHookInRoll, set by tests, runs in roll after the next segment file
// is in place and before the end-of-segment marker: where a crash test
// kills the writer.
var testHookInRoll func()

// takeNext puts the segment starting at next in place: the prepared one,
// or one made now. prepMu is held throughout, so a Flusher never prepares
// the same file at the same time.
func (j *Journal) takeNext(next int64) (*journalfile.Segment, error) {
	j.prepMu.Lock()
	defer j.prepMu.Unlock()
	s := j.prepared
	j.prepared = nil
	if s != nil && s.Start != next {
		_ = s.Discard()
		s = nil
	}
	if s == nil {
		var err error
		if s, err = journalfile.PrepareSegment(j.dir, next, j.segSize, j.opts.Clock(), false); err != nil {
			return nil, err
		}
	}
	if err := s.Publish(j.opts.Clock()); err != nil {
		_ = s.Discard()
		return nil, err
	}
	return s, nil
}

// prepareNext makes the segment after the writer's ready ahead of time,
// once the writer is past half of its segment: file creation and
// preallocation then happen on the caller's thread (a Flusher's), not in
// the appender's Claim. The segment is synced here only under
// FlushEveryCommit, whose roll would otherwise sync it on the appender's
// thread; under the other policies the first flush that reaches it does
// (PrepareSegment says why). It reports whether it prepared one.
func (j *Journal) prepareNext() (bool, error) {
	c := j.committed.Load()
	start := j.segmentStart(c)
	if c-start < j.segSize/2 {
		return false, nil
	}
	next := start + j.segSize
	j.prepMu.Lock()
	defer j.prepMu.Unlock()
	if j.prepared != nil && j.prepared.Start >= next || j.closed.Load() {
		return false, nil
	}
	if _, err := os.Stat(filepath.Join(j.dir, journalfile.SegmentName(next))); err == nil {
		return false, nil // the writer has rolled already
	}
	s, err := journalfile.PrepareSegment(j.dir, next, j.segSize, j.opts.Clock(), j.opts.Flush == FlushEveryCommit)
	if err != nil {
		return false, err
	}
	if j.prepared != nil {
		_ = j.prepared.Discard()
	}
	j.prepared = s
	return true, nil
}
