package ringbuf

import (
	"fmt"

	"github.com/dutyrt/duty/internal/atomicbuf"
	"github.com/dutyrt/duty/internal/record"
)

// OneToOne is a ring buffer for exactly one producer and one consumer
// (Agrona's OneToOneRingBuffer). The producer reserves 8 bytes beyond each
// record and zeroes the header after it before publishing, so the consumer
// always stops at a zero header and never needs to zero what it consumed.
//
// Its claims are its own (this file), built on the record core's layout
// and completions (internal/record); its consumer is the core's read loop,
// as a ManyToOne's is.
type OneToOne struct {
	ring
}

// NewOneToOne returns a one-to-one ring over buf, which must be a power of
// two (at least minCapacityOneToOne) plus TrailerLength bytes long and start
// on an 8-byte boundary. It never writes to buf (see NewManyToOne).
func NewOneToOne(buf []byte) (*OneToOne, error) {
	r := &OneToOne{}
	if err := r.init(buf, false); err != nil {
		return nil, err
	}
	return r, nil
}

// claimOneToOne reserves aligned bytes (plus the 8 pre-zeroed ones) and
// returns the record index (docs/agrona.md, "One-to-one claim"). The producer owns tail and head
// cache: they are read with plain (atomic, on amd64 a MOV) loads and stored
// with release stores for the consumer's Size and for other processes'
// views.
func (r *ring) claimOneToOne(aligned int) (int, error) {
	p := &r.p
	required := aligned + HeaderLength
	tail := p.Tail().Load()
	head := p.HeadCache().Load()
	if tail&(recordAlignment-1) != 0 {
		return 0, fmt.Errorf("%w: tail position %d is not aligned", ErrCorrupt, tail)
	}
	capacity := p.Capacity()
	if int64(required) > int64(capacity)-(tail-head) {
		head = p.Head().Load()
		if int64(required) > int64(capacity)-(tail-head) {
			return 0, ErrFull
		}
		atomicbuf.StoreRelease64(p.HeadCache(), head)
	}
	if next := tail + int64(aligned); (tail^next)&r.prefetchBlocks != 0 {
		r.prefetchClaim(tail, next)
	}
	recordIndex := int(tail & p.Mask())
	toEnd := capacity - recordIndex
	writeIndex := recordIndex
	nextTail := tail + int64(aligned)
	padding := 0
	if aligned == toEnd {
		// Ends exactly at the end of the ring: the next header is at 0.
		atomicbuf.StoreRelease64(p.Tail(), nextTail)
		atomicbuf.StoreRelease64(p.WordAt(0), 0)
		return recordIndex, nil
	}
	if required > toEnd {
		writeIndex = 0
		if required > int(head&p.Mask()) {
			head = p.Head().Load()
			if required > int(head&p.Mask()) {
				writeIndex = -1
				nextTail = tail
			}
			atomicbuf.StoreRelease64(p.HeadCache(), head)
		}
		padding = toEnd
		nextTail += int64(padding)
	}
	if padding == 0 && writeIndex >= 0 {
		// The common case: publish the tail and zero the header after
		// the record, in one call.
		atomicbuf.StoreRelease64Pair(p.Tail(), nextTail, p.WordAt(writeIndex+aligned), 0)
		return writeIndex, nil
	}
	atomicbuf.StoreRelease64(p.Tail(), nextTail)
	if padding != 0 {
		// Zero the header at 0 before the padding becomes visible, so the
		// consumer stops there after skipping the padding.
		atomicbuf.StoreRelease64(p.WordAt(0), 0)
		p.Mark(recordIndex, padding, paddingTypeID)
		p.Publish(recordIndex, padding)
	}
	if writeIndex < 0 {
		return 0, ErrFull
	}
	atomicbuf.StoreRelease64(p.WordAt(writeIndex+aligned), 0)
	return writeIndex, nil
}

// Write copies payload into the ring as one message of type typeID. It
// returns ErrFull, unwrapped and without allocating, when there is no room.
// Only one goroutine may produce.
func (r *OneToOne) Write(typeID int32, payload []byte) error {
	p := &r.p
	if typeID < 1 || uint(len(payload)) > uint(p.MaxMessageLength()) {
		return p.MessageError(typeID, len(payload))
	}
	length := len(payload) + HeaderLength
	aligned := record.Align(length)
	tail := p.Tail().Load()
	capacity := p.Capacity()
	index := int(tail & p.Mask())
	// The fast path, for a payload of up to 64 bytes: the record and the
	// header after it fit before the end of the ring and the cached head
	// says there is room. It makes no call but the final one and keeps
	// nothing live across it (the payload is copied word by word, not by
	// memmove), so nothing is spilled: on a producer whose stores to ring
	// lines wait for the consumer's core, every store to the stack also
	// waits in the store buffer behind them.
	if len(payload) <= record.MaxPayload && tail&(recordAlignment-1) == 0 && aligned < capacity-index &&
		int64(aligned+HeaderLength) <= int64(capacity)-(tail-p.HeadCache().Load()) {
		if next := tail + int64(aligned); (tail^next)&r.prefetchBlocks != 0 {
			r.prefetchAhead(next)
		}
		if dst := p.At(index + HeaderLength); len(payload) < 16 {
			record.CopyShort(dst, payload)
		} else {
			record.CopyBlocks(dst, payload)
		}
		// No claim marker: the header is already zero (pre-zeroed by the
		// previous record), which stops the consumer just as a negative
		// length does, and nobody else inspects a one-to-one claim. Zero
		// the next header, store the tail, then publish length and type
		// in one 8-byte store (the release that publishes the payload).
		atomicbuf.StoreRelease64Triple(p.WordAt(index+aligned), 0, p.Tail(), tail+int64(aligned),
			p.WordAt(index), record.HeaderWord(length, typeID))
		return nil
	}
	return r.writeSlow(typeID, payload)
}

// writeSlow is Write when the fast path does not apply: a long payload, a
// wrap, a stale head cache, a full ring, or a corrupt tail.
func (r *OneToOne) writeSlow(typeID int32, payload []byte) error {
	index, err := r.claimOneToOne(record.Size(len(payload)))
	if err != nil {
		return err
	}
	copy(r.p.Payload(index, len(payload)), payload)
	atomicbuf.StoreRelease64(r.p.WordAt(index), record.HeaderWord(len(payload)+HeaderLength, typeID))
	return nil
}

// TryClaim claims space for a message of length payload bytes; see
// ManyToOne.TryClaim. An open claim blocks the consumer for good if it is
// never committed or aborted: a one-to-one ring cannot be unblocked.
func (r *OneToOne) TryClaim(typeID int32, length int) (Claim, error) {
	if err := r.p.CheckMessage(typeID, length); err != nil {
		return Claim{}, err
	}
	index, err := r.claimOneToOne(record.Size(length))
	if err != nil {
		return Claim{}, err
	}
	return Claim(r.p.Claimed(index, typeID, length)), nil
}

// TryClaimBatch claims size contiguous bytes (the sum of RecordSize of the
// records to come) with one tail update. Append records to the Batch, then
// call CommitBatch (one publication for all of them) or AbortBatch.
func (r *OneToOne) TryClaimBatch(size int) (Batch, error) {
	total, err := r.p.CheckBatchSize(size, r.claimLimit)
	if err != nil {
		return Batch{}, err
	}
	index, err := r.claimOneToOne(total)
	if err != nil {
		return Batch{}, err
	}
	return Batch{r.p.ClaimedBatch(index, total)}, nil
}

// TryClaimRecords claims count records of type typeID, each with a payload
// of length bytes, with one tail update; see ManyToOne.TryClaimRecords.
func (r *OneToOne) TryClaimRecords(typeID int32, length, count int) (Records, error) {
	total, err := r.checkRecords(typeID, length, count)
	if err != nil {
		return Records{}, err
	}
	index, err := r.claimOneToOne(total)
	if err != nil {
		return Records{}, err
	}
	r.p.Mark(index, total, typeID)
	return r.records(index, length, count), nil
}
