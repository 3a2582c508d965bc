package record

import (
	"fmt"
	"unsafe"

	"github.com/dutyrt/duty/internal/atomicbuf"
)

// Batch is contiguous space claimed for several records with one tail
// update (TryClaimBatch; a one-to-one ring's claim and ClaimedBatch):
// records are appended into it, then it is completed with exactly one of
// CommitBatch, which publishes every record at once, or AbortBatch.
// Package ringbuf's Batch wraps it (docs: ringbuf.Batch).
//
// Until it is completed, the claim marker of the batch's first record
// covers the whole batch, so Unblock turns an abandoned batch into a
// single padding record: a consumer sees all of a batch or none of it.
//
// A Batch has four fields, so that Go passes and returns it in registers:
// a larger struct returned by a call is stored to a temporary and copied,
// loads that wait for the producer's ring stores to drain
// (docs/ringbuf.md, "Batches in a hot loop").
type Batch struct {
	p     *Producer
	index int    // record offset of the first record
	total int    // claimed bytes
	state uint64 // bytes appended so far (low half) | the first record's length << 32 (0 until appended)
}

// used returns the bytes appended so far; first the record length of the
// first record, 0 until it is appended.
func (b *Batch) used() int    { return int(uint32(b.state)) }
func (b *Batch) first() int32 { return int32(b.state >> 32) }

// Append adds a record of type typeID with a payload of length bytes and
// returns its payload space, aliasing the ring, to fill before the commit.
func (b *Batch) Append(typeID int32, length int) ([]byte, error) {
	// The fast path, with no call and no bounds check: a record after the
	// first that fits. Behind the first record's marker the consumer
	// cannot reach this header before the commit's release store, which
	// publishes it: one plain 8-byte store of length and type.
	if b.state>>32 != 0 && typeID >= 1 && uint(length) <= uint(b.p.maxMsgLength) {
		if used, size := int(uint32(b.state)), Size(length); size <= b.total-used {
			at := b.index + used
			b.state += uint64(size)
			base := b.p.base
			*(*int64)(unsafe.Add(base, at)) = HeaderWord(length+HeaderLength, typeID)
			return unsafe.Slice((*byte)(unsafe.Add(base, at+HeaderLength)), length), nil
		}
	}
	return b.append(typeID, length)
}

// append is Append's general path: the first record, and every error.
func (b *Batch) append(typeID int32, length int) ([]byte, error) {
	if b.p == nil {
		return nil, fmt.Errorf("%w: append to a batch that was never claimed", ErrNotClaimed)
	}
	if err := b.p.CheckMessage(typeID, length); err != nil {
		return nil, err
	}
	size := Size(length)
	used := b.used()
	if size > b.total-used {
		return nil, fmt.Errorf("%w: record of %d bytes, %d left in the batch", ErrTooLong, size, b.total-used)
	}
	at := b.index + used
	if used == 0 {
		// The first header already holds the batch's marker; the type is a
		// plain store published by the commit.
		*b.p.TypeAt(at) = typeID
		b.state |= uint64(length+HeaderLength) << 32
	} else {
		*(*int64)(unsafe.Pointer(b.p.WordAt(at))) = HeaderWord(length+HeaderLength, typeID)
	}
	b.state += uint64(size)
	return b.p.Payload(at, length), nil
}

// Len returns the number of bytes the batch claimed.
func (b *Batch) Len() int { return b.total }

// Remaining returns the bytes still free in the batch. Space left at the
// commit is published as padding.
func (b *Batch) Remaining() int { return b.total - b.used() }

// ClaimedBatch marks claimed batch space: one marker for all of it, its
// negated length, an ordered store as in Mark (the first Append's type and
// every record after it are plain stores behind it).
func (p *Producer) ClaimedBatch(index, total int) Batch {
	atomicbuf.StoreOrdered32(p.LengthAt(index), -int32(total))
	return p.BatchAt(index, total)
}

// BatchAt is the Batch of claimed, already marked space.
func (p *Producer) BatchAt(index, total int) Batch {
	return Batch{p: p, index: index, total: total}
}

// openBatch validates a batch passed to CommitBatch or AbortBatch.
func (p *Producer) openBatch(b Batch) (int, error) {
	if b.p != p {
		return 0, fmt.Errorf("%w: batch was not claimed from this ring", ErrNotClaimed)
	}
	recordIndex, length, err := p.OpenClaim(b.index + HeaderLength)
	if err != nil {
		return 0, err
	}
	if int(-length) != b.total {
		return 0, fmt.Errorf("%w: batch at %d covers %d bytes, ring says %d", ErrNotClaimed, b.index, b.total, -length)
	}
	return recordIndex, nil
}

// CommitBatch publishes every record appended to b at once (PublishClaim:
// a compare-and-swap where Unblock may have padded the batch, which then
// returns ErrAborted). Unused space at the end becomes padding; a batch
// with no record is aborted.
func (p *Producer) CommitBatch(b Batch) error {
	recordIndex, err := p.openBatch(b)
	if err != nil {
		return err
	}
	if b.first() == 0 {
		*p.TypeAt(recordIndex) = PaddingTypeID
		p.Publish(recordIndex, b.total)
		return nil
	}
	marker := p.WordAt(recordIndex).Load() // the first Append stored its type
	if rest := b.total - b.used(); rest > 0 {
		at := recordIndex + b.used()
		*p.TypeAt(at) = PaddingTypeID
		atomicbuf.StoreRelease32(p.LengthAt(at), int32(rest))
	}
	return p.PublishClaim(recordIndex, marker, b.total, int(b.first()))
}

// AbortBatch discards b: the consumer skips its whole space as one padding
// record.
func (p *Producer) AbortBatch(b Batch) error {
	recordIndex, err := p.openBatch(b)
	if err != nil {
		return err
	}
	*p.TypeAt(recordIndex) = PaddingTypeID
	p.Publish(recordIndex, b.total)
	return nil
}

// WriteBatchAt copies payloads, records of type typeID whose sizes
// CheckPayloads validated (total bytes), into batch space claimed at
// index, and publishes them: the body of a ring's WriteBatch, whichever
// way it claimed.
func (p *Producer) WriteBatchAt(index, total int, typeID int32, payloads [][]byte) {
	b := p.ClaimedBatch(index, total)
	for _, pl := range payloads {
		dst, _ := b.Append(typeID, len(pl)) // sizes validated by CheckPayloads
		copy(dst, pl)
	}
	_ = p.CommitBatch(b)
}
