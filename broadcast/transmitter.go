package broadcast

import (
	"fmt"

	"github.com/dutyrt/duty/internal/atomicbuf"
)

// Transmitter writes messages into a broadcast buffer. There must be exactly
// one Transmitter per buffer (across all processes that map it), and it is
// not safe for concurrent use: call Transmit from one goroutine at a time.
// The transmitter never waits for receivers; receivers that fall a whole
// ring behind lose messages.
type Transmitter struct {
	v            view
	tail         int64 // own copy of the tail counter: only this transmitter writes it
	intentFloor  int64 // tail intent found at construction; never store less
	maxMsgLength int
}

// NewTransmitter returns the transmitter for buf, a zeroed buffer from
// NewBuffer or any 8-byte aligned slice of a power-of-two ring capacity plus
// trailerLength bytes (an mmap'd file, for example). It never writes to buf: a
// transmitter that restarts over a live buffer continues at its tail.
//
// Errors: ErrCapacity (a length or alignment it cannot use), ErrCorrupt (a tail counter, or a
// tail intent more than a record past it, that no transmitter can have
// written).
func NewTransmitter(buf []byte) (*Transmitter, error) {
	v, err := newView(buf)
	if err != nil {
		return nil, err
	}
	tail := v.tail.Load()
	if !validPosition(tail) {
		return nil, corruptError("tail counter %d", tail)
	}
	// A transmitter that died between storing the tail intent and the tail
	// left intent > tail and may have overwritten records up to intent -
	// capacity. Lowering the intent again would let receivers validate those
	// records, so the intent never goes below what was found.
	// It is at most one record past the tail, plus the padding before it
	// (less than a record): an intent further ahead was not written by a
	// transmitter, and keeping it as the floor would make every record
	// look overwritten to every receiver until the tail caught up with it.
	maxLen := maxMsgLength(int(v.capacity))
	floor := v.tailIntent.Load()
	if maxRecord := align(int64(maxLen) + headerLength); validPosition(floor) && floor-tail > 2*maxRecord-recordAlignment {
		return nil, corruptError("tail intent %d more than a record past tail %d", floor, tail)
	}
	if !validPosition(floor) || floor < tail {
		floor = tail
	}
	return &Transmitter{v: v, tail: tail, intentFloor: floor, maxMsgLength: maxLen}, nil
}

// Capacity returns the ring capacity in bytes (without the trailer).
func (t *Transmitter) Capacity() int { return int(t.v.capacity) }

// MaxMsgLength returns the largest payload Transmit accepts.
func (t *Transmitter) MaxMsgLength() int { return t.maxMsgLength }

// Transmit copies one message into the buffer and publishes it to receivers.
// typeID must be at least 1 (ErrTypeID) and len(payload) at most MaxMsgLength
// (ErrTooLong). It does not allocate and never blocks.
//
// Ordering (docs/agrona.md, "Transmitter"). Every store below is an
// atomicbuf release store: a plain MOV on amd64 without -race, sync/atomic's
// sequentially consistent Store elsewhere.
//   - The tail intent is stored first, before any header or payload byte of
//     the new record (Agrona: release store, then a store fence). On amd64,
//     x86-TSO makes stores visible in program order and the call (to a
//     function the compiler may not inline) is a compiler barrier, so no
//     later store can become visible before it;
//     elsewhere every later store is itself a sync/atomic store (header
//     words, and payload words by payload_atomic.go), so Go's sequential
//     consistency orders them after it. Either way a receiver that read any
//     byte of the new record sees the new intent when it validates, and
//     discards what it read.
//   - Header words are atomic stores; the payload is a plain copy on amd64
//     (payload_plain.go), atomic words elsewhere and under -race.
//   - latest, then tail, are stored last: a receiver that loads the new tail
//     also sees the complete record and the new latest.
//
// Release stores suffice for both orders above, and cost less than a
// sequentially consistent store (an XCHG on amd64, which drains the store
// buffer) would for the intent and the header words (docs/broadcast.md,
// "Memory ordering").
func (t *Transmitter) Transmit(typeID int32, payload []byte) error {
	if typeID < 1 {
		return fmt.Errorf("%w: type=%d", ErrTypeID, typeID)
	}
	if len(payload) > t.maxMsgLength {
		return fmt.Errorf("%w: length=%d, max=%d", ErrTooLong, len(payload), t.maxMsgLength)
	}
	v := &t.v
	tail := t.tail
	recordOffset := tail & v.mask
	recordLength := int64(len(payload)) + headerLength
	aligned := align(recordLength)
	newTail := tail + aligned
	toEnd := v.capacity - recordOffset

	if toEnd < aligned {
		// The record does not fit before the end of the ring: pad to the end
		// (toEnd may be exactly headerLength) and write the record at 0.
		atomicbuf.StoreRelease64(v.tailIntent, max(newTail+toEnd, t.intentFloor))
		atomicbuf.StoreRelease32(v.buf.Int32At(int(recordOffset)+typeOffset), paddingTypeID)
		atomicbuf.StoreRelease32(v.buf.Int32At(int(recordOffset)+lengthOffset), int32(toEnd))
		tail += toEnd
		recordOffset = 0
	} else {
		atomicbuf.StoreRelease64(v.tailIntent, max(newTail, t.intentFloor))
	}

	atomicbuf.StoreRelease32(v.buf.Int32At(int(recordOffset)+typeOffset), typeID)
	atomicbuf.StoreRelease32(v.buf.Int32At(int(recordOffset)+lengthOffset), int32(recordLength))
	writePayload(v, recordOffset+headerLength, payload)

	atomicbuf.StoreRelease64(v.latest, tail)
	t.tail = tail + aligned
	atomicbuf.StoreRelease64(v.tail, t.tail)
	return nil
}
