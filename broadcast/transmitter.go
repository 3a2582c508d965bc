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
// TrailerLength bytes (an mmap'd file, for example). It never writes to buf: a
// transmitter that restarts over a live buffer continues at its tail.
//
// Errors: ErrMisaligned, ErrCapacity, ErrCorrupt (a tail counter no
// transmitter can have written).
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
	floor := v.tailIntent.Load()
	if !validPosition(floor) || floor < tail {
		floor = tail
	}
	return &Transmitter{v: v, tail: tail, intentFloor: floor, maxMsgLength: MaxMsgLength(int(v.capacity))}, nil
}

// Capacity returns the ring capacity in bytes (without the trailer).
func (t *Transmitter) Capacity() int { return int(t.v.capacity) }

// MaxMsgLength returns the largest payload Transmit accepts.
func (t *Transmitter) MaxMsgLength() int { return t.maxMsgLength }

// Transmit copies one message into the buffer and publishes it to receivers.
// typeID must be at least 1 (ErrTypeID) and len(payload) at most MaxMsgLength
// (ErrTooLong). It does not allocate and never blocks.
//
// Ordering (agrona.md 4.2): the tail intent is stored first, with a
// sequentially consistent store (on amd64 an XCHG, a full fence, standing in
// for Agrona's release store plus store fence), so no header or payload byte
// of the new record can become visible before it. A receiver that read any of
// those bytes therefore sees the new tail intent when it validates, and
// discards what it read. The header words are atomic stores; the payload is
// a plain copy (see payload_plain.go for why that is sound and
// payload_atomic.go for where it is not used). Then latest and tail are
// published with release stores: a receiver that observes the new tail also
// observes the complete record.
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
	recordLength := int64(len(payload)) + HeaderLength
	aligned := align(recordLength)
	newTail := tail + aligned
	toEnd := v.capacity - recordOffset

	if toEnd < aligned {
		// The record does not fit before the end of the ring: pad to the end
		// (toEnd may be exactly HeaderLength) and write the record at 0.
		v.tailIntent.Store(max(newTail+toEnd, t.intentFloor))
		v.buf.Int32At(int(recordOffset) + TypeOffset).Store(PaddingTypeID)
		v.buf.Int32At(int(recordOffset) + LengthOffset).Store(int32(toEnd))
		tail += toEnd
		recordOffset = 0
	} else {
		v.tailIntent.Store(max(newTail, t.intentFloor))
	}

	v.buf.Int32At(int(recordOffset) + TypeOffset).Store(typeID)
	v.buf.Int32At(int(recordOffset) + LengthOffset).Store(int32(recordLength))
	writePayload(v, recordOffset+HeaderLength, payload)

	atomicbuf.StoreRelease64(v.latest, tail)
	t.tail = tail + aligned
	atomicbuf.StoreRelease64(v.tail, t.tail)
	return nil
}
