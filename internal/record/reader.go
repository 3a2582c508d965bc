package record

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/dutyrt/duty/internal/atomicbuf"
	"github.com/dutyrt/duty/internal/pad"
	"github.com/dutyrt/duty/internal/prefetch"
)

// Reader is the consumer of a ring of records: Agrona's read and
// controlledRead (docs/agrona.md, "Read" and "Controlled read"), written once for both of package
// ringbuf's ring types and, through the ring, for the mailbox's drain.
// It delivers committed records in order from the head position up to the
// first length that is not positive (not written yet, or a claim still
// open: never skipped), never across the end of the log in one call, skips
// padding, checks every record (Check) and reports one no correct producer
// writes as ErrCorrupt, and releases what it consumed with one release
// store of the head when it returns (or at a Commit). A ring whose
// producers need it (many-to-one: Unblock tells an unwritten claim by its
// zeros) has the consumer zero the space before releasing it.
//
// One Reader per consumer (one goroutine); it holds no state of the ring
// itself beyond consumed, so other views (processes) of the same ring can
// take over from the head a stopped consumer left.
type Reader struct {
	Log
	head *atomic.Int64
	// zero: the consumer zeroes what it consumed before releasing it.
	zero bool
	// demote: the consumer demotes the lines it zeroed and released
	// (SetDemote).
	demote bool
	// prefetchBlocks is PrefetchBlocks(capacity): see prefetchRead.
	prefetchBlocks int64

	// consumed is written by the consumer before each handler call, so it
	// sits on cache lines of its own, away from the read-only fields
	// producers of the same structure may load (a ring's).
	_        pad.Line
	consumed int64 // position through the last message handed to a handler
	_        pad.Line
}

// Init points r at records, the records of a ring whose head position is
// the word head. zero makes the consumer zero what it consumed (a
// many-to-one ring); such a ring large enough to prefetch in also demotes
// the lines it releases until SetDemote(false). Init writes nothing to
// the ring.
func (r *Reader) Init(records []byte, head *atomic.Int64, zero bool) {
	*r = Reader{Log: NewLog(records), head: head, zero: zero, prefetchBlocks: PrefetchBlocks(len(records))}
	r.demote = zero && r.prefetchBlocks != 0
}

// SetDemote turns the demotion of released lines on or off (only a
// zeroing consumer in a ring large enough to prefetch demotes; see
// demoteReleased).
func (r *Reader) SetDemote(on bool) { r.demote = on && r.zero && r.prefetchBlocks != 0 }

// Demotes reports whether the consumer demotes the lines it releases.
func (r *Reader) Demotes() bool { return r.demote }

// Ready reports whether a read now would find a committed record at the
// head: a message, padding, or a record to report as corrupt (a
// misaligned head is left to the read, which reports it). Two loads, no
// call: small enough to inline, so that a consumer that spins on it makes
// no call while the ring is empty (docs/ringbuf.md, "Spinning consumers").
func (r *Reader) Ready() bool { return !r.empty() }

// empty is Ready's negation, written as the test an empty poll makes (the
// record at head is not committed) so that the compiler lays the empty
// poll's return out as the straight path of its callers (ringbuf's Read,
// the mailbox's idle cycle).
func (r *Reader) empty() bool {
	head := r.head.Load()
	return head&(Alignment-1) == 0 && r.LengthAt(int(head&r.mask)).Load() <= 0
}

// The read loops. Agrona's read and controlledRead, one function each, so
// that each keeps as few values live across the handler call as it can: Go
// saves every live register around a call, so each one is a store and a
// load per message (BenchmarkConsume, docs/ringbuf.md "Fast paths").
// Positions are kept as ring positions (pos: the next record; origin: the
// position of index 0 in this lap): a read never crosses the end of the
// ring, so index = pos - origin stays below capacity.
//
// Head is released when the read returns, not in a deferred function: a
// handler that panics still consumes its message, as in Agrona, because
// r.consumed, stored before each handler call, is what the next read
// releases first (readStart). A deferred release would add a deferred
// call to every read (docs/benchmarks.md, "Tried and rejected").

// readStart returns the position a read starts from: the head, after
// releasing what a panicking handler left consumed.
func (r *Reader) readStart() (int64, error) {
	head := r.head.Load() // consumer-owned: nobody else stores it
	if head&(Alignment-1) != 0 {
		return 0, fmt.Errorf("%w: head position %d is not aligned", ErrCorrupt, head)
	}
	if c := r.consumed; c > head {
		// A handler panicked during the previous read: what was handed out
		// up to and including its message is consumed (as in Agrona, where
		// the exception propagates after head moves), released now.
		if c-head > int64(r.capacity)-(head&r.mask) {
			// Not a range this consumer read (a read never crosses the end
			// of the ring): head was rewritten under it, in a shared file.
			r.consumed = head
			return 0, fmt.Errorf("%w: head position %d moved under the consumer, which consumed up to %d", ErrCorrupt, head, c)
		}
		r.release(head, c)
		head = c
	}
	return head, nil
}

// Read delivers up to limit messages to h (Agrona's read) and returns how
// many. A caller that polls calls Ready first, in line: Read is not small
// enough to inline. A handler may read from the same ring: the inner read
// consumes the handler's message and what it reads, and this one returns
// when the handler does (it sees head moved).
func (r *Reader) Read(h func(typeID int32, payload []byte), limit int) (messages int, err error) {
	head, err := r.readStart()
	if err != nil {
		return 0, err
	}
	origin := head &^ r.mask
	pos := head
	for int(pos-origin) < r.capacity && messages < limit {
		length, typeID, valid := r.header(int(pos - origin))
		if length <= 0 {
			break // not yet written, or an open claim: never skip it
		}
		next := pos + int64(Align(int(length)))
		if !valid {
			return messages, r.corruptRecord(head, pos)
		}
		if (pos^next)&r.prefetchBlocks != 0 && next-head >= readPrefetchDistance {
			r.prefetchRead(next)
		}
		index := int(pos - origin)
		pos = next
		if typeID == PaddingTypeID {
			continue
		}
		r.consumed = pos
		messages++
		h(typeID, r.Payload(index, int(length)-HeaderLength))
		if r.head.Load() != head {
			// The handler read from this ring (nothing else moves head):
			// that read released this message and what it read after
			// it. Going on from pos, or releasing from head, would
			// deliver its messages again, move head back or zero space
			// producers may have written since.
			return messages, nil
		}
	}
	r.finish(head, pos)
	return messages, nil
}

// ControlledRead delivers up to limit messages to h, which decides for
// each with an Action (Agrona's controlledRead, docs/agrona.md "Controlled read"). See Read.
func (r *Reader) ControlledRead(h func(typeID int32, payload []byte) Action, limit int) (messages int, err error) {
	head, err := r.readStart()
	if err != nil {
		return 0, err
	}
	origin := head &^ r.mask
	pos := head
	start := head // head moves with Commit actions; see prefetchRead
	for int(pos-origin) < r.capacity && messages < limit {
		length, typeID, valid := r.header(int(pos - origin))
		if length <= 0 {
			break // not yet written, or an open claim: never skip it
		}
		at := pos
		if !valid {
			return messages, r.corruptRecord(head, pos)
		}
		index := int(at - origin)
		pos += int64(Align(int(length)))
		if (at^pos)&r.prefetchBlocks != 0 && pos-start >= readPrefetchDistance {
			r.prefetchRead(pos)
		}
		if typeID == PaddingTypeID {
			continue
		}
		r.consumed = pos
		action := h(typeID, r.Payload(index, int(length)-HeaderLength))
		if r.head.Load() != head {
			// The handler read from this ring, which consumed this
			// message (whatever the action) and released what it read:
			// see Read.
			return messages + 1, nil
		}
		switch action {
		case Abort:
			r.finish(head, at)
			return messages, nil
		case Break:
			messages++
			r.finish(head, pos)
			return messages, nil
		case Commit:
			messages++
			r.release(head, pos)
			head = pos
		default: // Continue, and anything unknown
			messages++
		}
	}
	r.finish(head, pos)
	return messages, nil
}

// header reads the header of the record at index for the read loops: its
// length, with an acquire load (it publishes the type and the payload),
// and, for a length > 0, its type and whether a correct producer can have
// written them (Check). A length <= 0 is a record not yet written, or an
// open claim: the read stops there, never skipping it. Inlined in the
// loops.
func (r *Reader) header(index int) (length, typeID int32, valid bool) {
	length = r.LengthAt(index).Load()
	if length <= 0 {
		return length, 0, false
	}
	typeID = *r.TypeAt(index)
	return length, typeID, Check(index, r.capacity, length, typeID)
}

// corruptRecord ends a read at the invalid record at pos: what came before
// it is consumed, the record and everything after it stay. Out of line, so
// the read loops keep nothing live for it.
//
//go:noinline
func (r *Reader) corruptRecord(head, pos int64) error {
	r.finish(head, pos)
	index := int(pos & r.mask)
	return errCorruptRecord(index, r.capacity, r.LengthAt(index).Load(), *r.TypeAt(index))
}

// finish ends a read that consumed the records from head to next: releases
// them and records that nothing is pending.
func (r *Reader) finish(head, next int64) {
	if next != head {
		r.release(head, next)
	}
	r.consumed = next
}

// release zeroes (if the ring wants it) the consumed bytes from position
// head to next, which never cross the end of the ring, then publishes
// head = next with a release store: producers that load head see the
// zeroes.
func (r *Reader) release(head, next int64) {
	if r.zero {
		index := int(head & r.mask)
		end := index + int(next-head)
		clear(r.Bytes()[index:end])
		atomicbuf.StoreRelease64(r.head, next)
		if r.demote {
			r.demoteReleased(index, end)
		}
		return
	}
	atomicbuf.StoreRelease64(r.head, next)
}

// prefetchRead is called by a consumer whose position moves to next across
// a block boundary, once the read has consumed readPrefetchDistance bytes:
// it asks for the block readPrefetchDistance bytes beyond next, so that the
// loads of the records there (which the consumer makes one after the other,
// each address depending on the length before it) find their lines already
// on their way. The condition is the evidence that the producer is ahead: a
// consumer that keeps catching up (a record or two per read) would ask for
// lines the producer has yet to write, and take them from it.
func (r *Reader) prefetchRead(next int64) {
	prefetch.Read(unsafe.Add(r.base, (next+readPrefetchDistance)&r.mask&r.prefetchBlocks))
}

// demoteReleased asks for the lines that the release of the bytes from
// index to end has finished with to leave this core's caches for the cache
// all cores share (CLDEMOTE, internal/prefetch; docs/ringbuf.md, "Demoting
// released lines", says why): every line of the range but a last one that
// end only partly covers (the producers may be writing its rest), and the
// line that holds index even when it starts before it, so that every line
// is demoted once per lap, after its last byte is released. A hint only:
// it changes no memory. Called after head is published, so producers
// waiting for room do not wait for it.
func (r *Reader) demoteReleased(index, end int) {
	off := int(uintptr(r.base) & (pad.LineSize - 1)) // lines are absolute
	first := (index + off) &^ (pad.LineSize - 1)
	last := (end + off) &^ (pad.LineSize - 1)
	if last > first {
		demoteLines(unsafe.Add(r.base, first-off), (last-first)/pad.LineSize)
	}
}

// demoteLines is prefetch.Demote, a variable so that tests can see what
// the consumer demotes.
var demoteLines = prefetch.Demote
