package publication

import (
	"fmt"
	"sync/atomic"

	"github.com/dutyrt/duty/internal/atomicbuf"
	"github.com/dutyrt/duty/internal/record"
	"github.com/dutyrt/duty/ringbuf"
)

// logReader reads a publication log from one subscriber's position: the
// part of a Subscription that touches the log, apart so that it can be
// fuzzed over arbitrary bytes. Everything it reads was written by other
// processes, so every length and type is checked before it is used.
type logReader struct {
	log      record.Log    // the log: its header words and payloads, through the record core
	mtu      int32         // longest record but padding
	buf      []byte        // reassembly buffer, maxMessage bytes, allocated once
	position *atomic.Int64 // where the position is published (the slot's word)
	pos      int64         // the position, owned by this reader
	tail     *atomic.Int64 // the publication's tail word (sealedBit masked off): see claimed
	limit    int64         // the tail as last loaded: records end at or before it
	unblocks *atomic.Int64 // the publication's unblocked-claims count: see claimed
	dropped  int64         // messages dropped as inconsistent
	reading  bool          // inside read (cleared by its deferred function, also on a panic)
	stop     bool          // set by a handler's Subscription.Close: read returns after it
}

func newLogReader(log []byte, mtu, maxMessage int, position *atomic.Int64, pos int64, tail, unblocks *atomic.Int64) logReader {
	return logReader{
		tail:     tail,
		unblocks: unblocks,
		mtu:      int32(mtu),
		log:      record.NewLog(log),
		buf:      make([]byte, maxMessage),
		position: position,
		pos:      pos,
	}
}

// corrupt is the error for the record at log index index, at position
// position, whose header no publisher writes. Out of line: the reader's
// loop only calls it.
func (r *logReader) corrupt(index int, position int64, length, typeID int32) error {
	return fmt.Errorf("%w: record at position %d (log index %d) has length %d and type %#x (capacity %d)",
		ErrCorrupt, position, index, length, typeID, r.log.Capacity())
}

// read is Aeron's Image.poll and controlledPoll over the log (docs/ipc.md, "The Aeron IPC model";
// 2.7 and 3), with Agrona's record rules: it reads from the position up to
// the first record whose length is not positive (not written yet, or a
// claim still open: never skipped), never across the end of the log in one
// call, skips padding, delivers messages (a fragmented message is
// reassembled and delivered once, whole), and publishes the new position
// with a release store when it returns (deferred: a handler that panics
// consumes its message, as in Aeron) or at a Commit. Exactly one of h and
// ch is non-nil.
//
// Fragments of one message are claimed together and published by one
// store, so a reader never waits for the rest of a message: a group that
// is not complete and consistent (continuity of positions, same type, one
// BEGIN, an END, within the max message length) was not written by a
// correct publisher; it is dropped, counted, and never delivered in part.
func (r *logReader) read(h ringbuf.Handler, ch ringbuf.ControlledHandler, limit int) (messages int, err error) {
	start := r.pos
	if start < 0 || start&(record.Alignment-1) != 0 {
		return 0, fmt.Errorf("%w: subscriber position %d", ErrCorrupt, start)
	}
	index := int(start & r.log.Mask())
	// Late bytes past the tail exist only after an unblock (see claimed):
	// until one happens, the tail is never loaded. One load per poll of a
	// word written once per unblock.
	checkTail := r.unblocks.Load() != 0
	// bytesRead lives in a register; consumed mirrors it in memory before
	// each handler call, for the deferred release.
	bytesRead, consumed := 0, 0
	r.reading = true
	defer func() {
		r.reading = false
		if consumed > 0 {
			r.pos = start + int64(consumed)
			atomicbuf.StoreRelease64(r.position, r.pos)
		}
	}()
	for index+bytesRead < r.log.Capacity() && messages < limit && !r.stop {
		at := index + bytesRead
		length := r.log.LengthAt(at).Load() // acquire: publishes the type and payload
		if length <= 0 {
			break
		}
		typeID := *r.log.TypeAt(at)
		// The record core's validation (a length that covers the header
		// and, aligned, stays inside the log; a message type or padding),
		// and the publication's own bound: every record but padding is at
		// most the MTU long.
		if !record.Check(at, r.log.Capacity(), length, typeID) || (length > r.mtu && typeID != record.PaddingTypeID) {
			consumed = bytesRead
			return messages, r.corrupt(at, start+int64(bytesRead), length, typeID)
		}
		aligned := record.Align(int(length))
		if checkTail && !r.claimed(start+int64(bytesRead+aligned)) {
			break
		}
		if typeID == record.PaddingTypeID {
			bytesRead += aligned
			continue
		}
		var payload []byte
		size := aligned
		switch {
		case typeID&flagBits == 0:
			payload = r.log.Payload(at, int(length)-record.HeaderLength)
		case typeID&(fragmentFlag|beginFlag|foreignBits) != fragmentFlag|beginFlag:
			// A middle or last fragment without its first, a flag
			// without fragmentFlag, or a bit no publisher sets.
			r.dropped++
			bytesRead += aligned
			continue
		default:
			if typeID&maxTypeID == 0 {
				// A fragmented message of type 0, which no publisher
				// sends; checked here, off the path of plain records.
				consumed = bytesRead
				return messages, r.corrupt(at, start+int64(bytesRead), length, typeID)
			}
			n, group, ok := r.reassemble(at, typeID, length, aligned)
			if checkTail && !r.claimed(start+int64(bytesRead+group)) {
				consumed = bytesRead
				return messages, nil
			}
			if !ok {
				r.dropped++
				bytesRead += group
				continue
			}
			payload, size = r.buf[:n:n], group
		}
		bytesRead += size
		consumed = bytesRead
		typeID &= maxTypeID
		if h != nil {
			messages++
			h(typeID, payload)
			continue
		}
		switch ch(typeID, payload) {
		case ringbuf.Abort:
			// Not consumed: a fragmented message rolls back to its BEGIN.
			consumed = bytesRead - size
			return messages, nil
		case ringbuf.Break:
			messages++
			return messages, nil
		case ringbuf.Commit:
			messages++
			r.pos = start + int64(bytesRead)
			atomicbuf.StoreRelease64(r.position, r.pos)
			start = r.pos
			index += bytesRead
			bytesRead, consumed = 0, 0
		default: // Continue, and anything unknown
			messages++
		}
	}
	consumed = bytesRead
	return messages, nil
}

// claimed reports whether the bytes up to position end were claimed by a
// publisher, that is whether end is at most the tail. Bytes past it are
// what a stalled publisher wrote late into a claim the subscribers
// unblocked, after the owner cleaned that space (docs/publication.md, "Why
// the unblock is safe"; TestLateClaimBytesNotReadALapLater). The tail is
// loaded again only when the last value does not cover end, and read asks
// only once the publication has had an unblock (without one no claim is
// written late; the window left is a subscriber killed between its unblock
// and its count), so the tail's line stays out of the hot loop. Ordering:
// the caller's atomic load of the record's length saw the commit, which
// follows the claim's tail CAS, so this load sees that tail or a later
// one.
func (r *logReader) claimed(end int64) bool {
	if end <= r.limit {
		return true
	}
	r.limit = r.tail.Load() &^ sealedBit
	return end <= r.limit
}

// stalled judges the position where a poll stopped without reading
// anything, before the subscriber waits there (Subscription.idleAt): nil
// when a correct publisher leaves the log that way, an error wrapping
// ErrCorrupt when none does. Anything it rejects would stop every
// subscriber for good while the owner lives (nothing is unblocked then),
// and the publisher with them. Out of line of the reader's loop: only a
// poll that read nothing calls it.
//
// word is the tail word, loaded after the read. Publishers store it only
// by CAS to the end of a claim (8-aligned, at most the max position) and
// by sealing it (sealedBit, no other bit above the position). It is never
// behind the position: every record read ended at or before the tail (its
// claim moved the tail first), the tail is loaded after the read's
// (acquire) load of the last record's length, and the join position is at
// most the tail. It is never more than a lap ahead of an active
// subscriber: publishers claim below the limit, at most its position plus
// the window (half a lap at most); one further ahead has overwritten what
// the subscriber has not read. (A subscriber dropped meanwhile is told so
// by Subscription.corrupted.)
//
// At the tail nothing is claimed at the position and the subscriber waits
// whatever lies there: at most the late bytes of an unblocked claim (see
// claimed), which the claim that covers them overwrites. Below it the
// position is covered by a claim, whose header is either not written yet
// (zero), or its claim marker (openClaim), or positive: committed since
// the read, which judges it at the next poll, or late bytes ending past
// the tail (see claimed).
func (r *logReader) stalled(word int64) error {
	tail := word &^ sealedBit
	if word < 0 || tail&(record.Alignment-1) != 0 || tail > maxPositionFor(r.log.Capacity()) ||
		tail < r.pos || tail-r.pos > int64(r.log.Capacity()) {
		return r.badTail(word)
	}
	if r.pos == tail {
		return nil
	}
	index := int(r.pos & r.log.Mask())
	// One 8-byte atomic load: a marker is one 8-byte store (Publication.mark)
	// and a completion or an unblock rewrites the word with one 8-byte CAS
	// (an Offer's commit stores the length half alone, keeping the type), so
	// the length and type are one header's. Aligned 8-byte accesses are
	// single-copy atomic on amd64 and arm64.
	header := r.log.WordAt(index).Load()
	length, typeID := int32(header), int32(header>>32)
	switch {
	case length > 0:
		return nil
	case length == 0:
		if typeID == 0 {
			return nil
		}
	case r.openClaim(index, -int64(length), typeID, tail-r.pos):
		return nil
	}
	return r.corrupt(index, r.pos, length, typeID)
}

// badTail is stalled's error for a tail word no publisher stores.
func (r *logReader) badTail(word int64) error {
	return fmt.Errorf("%w: tail word %#x with the subscriber at position %d (capacity %d)",
		ErrCorrupt, word, r.pos, r.log.Capacity())
}

// openClaim reports whether a claim marker of n bytes (its negated length)
// and type typeID at log index, with room bytes claimed from there up to
// the tail, is one a correct publisher writes (Publication.mark):
//   - one record (Offer, TryClaim): a message type, and n is the record's
//     length, a header and a payload of at most the MTU's and the max
//     message;
//   - a fragmented message (offerFragmented): the first fragment's type
//     (fragmentFlag and beginFlag, not endFlag) and n is the whole claim:
//     claimSize of a message longer than one record's payload and at most
//     the max message. Such a claim is full records of the MTU and a last
//     one of 16 bytes to the MTU, so n is a multiple of 8 beyond the MTU
//     that is never 8 more than a multiple of it;
//   - the padding of a claim that did not fit before the end of the log
//     (claim): n runs exactly to the end.
//
// Every claim ends within the log and within room (its CAS moved the tail
// to its end). The MTU and the max message are this process's copies.
func (r *logReader) openClaim(index int, n int64, typeID int32, room int64) bool {
	aligned := (n + record.Alignment - 1) &^ (record.Alignment - 1)
	if aligned > int64(r.log.Capacity()-index) || aligned > room {
		return false
	}
	mtu, maxMessage := int64(r.mtu), int64(len(r.buf))
	switch {
	case typeID >= 1 && typeID <= maxTypeID:
		return n >= record.HeaderLength && n <= min(mtu, maxMessage+record.HeaderLength)
	case typeID&^maxTypeID == fragmentFlag|beginFlag && typeID&maxTypeID != 0:
		return n%record.Alignment == 0 && n > mtu && n%mtu != record.Alignment &&
			n <= int64(claimSize(len(r.buf), int(r.mtu)-record.HeaderLength))
	case typeID == record.PaddingTypeID:
		return n == int64(r.log.Capacity()-index)
	}
	return false
}

// reassemble copies the fragments of the message whose BEGIN record is at
// index (type typeID, length firstLength, aligned length first, all as read
// validated them) into r.buf. It returns the message length and the bytes
// the group takes, and false, with the bytes of the consistent prefix to
// skip (at least the first record), if the group is not one complete
// message.
//
// The first record's header is not loaded again: the word may have changed
// since read checked it (the owner zeroing the space of a dropped
// subscriber, a lapping publisher, a broken peer), and an unchecked length
// would slice out of range.
func (r *logReader) reassemble(index int, typeID, firstLength int32, first int) (int, int, bool) {
	want := typeID &^ (beginFlag | endFlag) // the message type with fragmentFlag
	n, at := 0, index
	length, t, aligned := firstLength, typeID, first
	for at < r.log.Capacity() {
		if at != index {
			length = r.log.LengthAt(at).Load()
			t = *r.log.TypeAt(at)
			if !record.Check(at, r.log.Capacity(), length, t) || length > r.mtu || t&^endFlag != want {
				return n, at - index, false
			}
			aligned = record.Align(int(length))
		}
		payload := int(length) - record.HeaderLength
		if payload > len(r.buf)-n {
			return n, max(at-index, first), false
		}
		copy(r.buf[n:], r.log.Payload(at, payload))
		n += payload
		at += aligned
		if t&endFlag != 0 {
			return n, at - index, true
		}
	}
	return n, at - index, false
}
