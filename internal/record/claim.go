package record

import (
	"fmt"
	"unsafe"

	"github.com/dutyrt/duty/internal/atomicbuf"
)

// Claim is space for one record claimed by TryClaim: the payload's index
// in the ring's buffer (the record's offset plus HeaderLength) and the
// payload. Package ringbuf's Claim has the same fields, and converts.
type Claim struct {
	Index   int
	Payload []byte
}

// Claim reserves required (aligned) bytes and returns the record index:
// the many-to-one general claim. Agrona's algorithm (docs/agrona.md, "Many-to-one claim"),
// including the rule that a record that fits neither at the end of the
// ring nor at its start still pads the end and reports ErrFull, so the
// consumer can move head to the start. It starts from the tail guess and
// stores the tail it claimed up to as the new one.
func (p *Producer) Claim(required int) (int, error) {
	head := p.headCache.Load()
	tail := p.hint.Load()
	for {
		if tail&(Alignment-1) != 0 {
			return 0, fmt.Errorf("%w: tail position %d is not aligned", ErrCorrupt, tail)
		}
		if int64(required) > int64(p.capacity)-(tail-head) {
			head = p.head.Load()
			if int64(required) > int64(p.capacity)-(tail-head) {
				// The guess never runs ahead of a tail that only grows;
				// a tail rewritten backwards (a trailer reinitialised in a
				// shared file) would leave it there, and this view would
				// report ErrFull for ever on an empty ring. So full is
				// decided on the tail itself: one more load, only here.
				if t := p.tail.Load(); t != tail {
					tail = t
					atomicbuf.StoreRelease64(&p.hint, t)
					continue
				}
				return 0, ErrFull
			}
			atomicbuf.StoreRelease64(p.headCache, head)
		}
		padding := 0
		tailIndex := int(tail & p.mask)
		toEnd := p.capacity - tailIndex
		writeIndex := tailIndex
		newTail := tail + int64(required)
		if required > toEnd {
			writeIndex = 0
			if headIndex := int(head & p.mask); required > headIndex {
				head = p.head.Load()
				if required > int(head&p.mask) {
					writeIndex = -1
					newTail = tail
				}
				atomicbuf.StoreRelease64(p.headCache, head)
			}
			padding = toEnd
			newTail += int64(padding)
		}
		// The guess only ever lags the tail, so a stale one claims nothing
		// and reports ErrFull only when the real tail would too.
		if !p.tail.CompareAndSwap(tail, newTail) {
			tail = p.tail.Load()
			continue
		}
		atomicbuf.StoreRelease64(&p.hint, newTail)
		if padding != 0 {
			// Same protocol as a record: marker, type, publication.
			p.Mark(tailIndex, padding, PaddingTypeID)
			p.Publish(tailIndex, padding)
		}
		if writeIndex < 0 {
			return 0, ErrFull
		}
		return writeIndex, nil
	}
}

// Write copies payload into the ring as one record of type typeID. It
// returns ErrFull, unwrapped and without allocating, when there is no
// room. Safe for concurrent use by any number of producers.
func (p *Producer) Write(typeID int32, payload []byte) error {
	if typeID < 1 || uint(len(payload)) > uint(p.maxMsgLength) {
		return p.MessageError(typeID, len(payload))
	}
	// The fast path, for a payload of up to MaxPayload bytes that fits
	// before the end of the ring when the cached head says there is room:
	// one CAS attempt (a failed one goes to the general path), then one
	// call writes the claim marker, the payload and the length, and stores
	// the new tail guess (PublishRecord). Nothing is live after it, so
	// nothing spills (docs/ringbuf.md, "Fast paths").
	if len(payload) <= MaxPayload {
		size := Size(len(payload))
		if index, tail, ok := p.ClaimFast(size); ok {
			p.PublishFast(index, Marker(len(payload), typeID), payload, tail+int64(size))
			return nil
		}
	}
	return p.WriteSlow(typeID, payload)
}

// WriteSlow is Write when the fast path does not apply: a long payload, a
// wrap, a stale guess or head cache, a full ring, or a corrupt tail. A
// separate function, so that Write keeps nothing live across a call; a
// caller that runs Write's fast path in line (ringbuf's ManyToOne.Write)
// calls it after the fast path, with a payload already validated.
func (p *Producer) WriteSlow(typeID int32, payload []byte) error {
	index, err := p.Claim(Size(len(payload)))
	if err != nil {
		return err
	}
	p.WriteRecord(index, typeID, payload)
	return nil
}

// TryClaim claims space for a record of type typeID with a payload of
// length bytes, to be completed with Commit or Abort of Claim.Index.
func (p *Producer) TryClaim(typeID int32, length int) (Claim, error) {
	if typeID < 1 || uint(length) > uint(p.maxMsgLength) {
		return Claim{}, p.MessageError(typeID, length)
	}
	aligned := Size(length)
	// The fast path, as in Write: one CAS attempt from the tail guess when
	// the record fits before the end and the cached head says there is
	// room; then a single call stores the claim marker (the negated record
	// length) with the type as one 8-byte word, the first store into the
	// claim and ordered before every later one (see Mark), and the new
	// guess.
	if index, tail, ok := p.ClaimFast(aligned); ok {
		atomicbuf.StoreOrdered64Pair(p.WordAt(index), Marker(length, typeID), &p.hint, tail+int64(aligned))
		at := index + HeaderLength
		return Claim{Index: at, Payload: unsafe.Slice((*byte)(unsafe.Add(p.base, at)), length)}, nil
	}
	index, err := p.Claim(aligned)
	if err != nil {
		return Claim{}, err
	}
	return p.Claimed(index, typeID, length), nil
}

// TryClaimBatch claims size contiguous bytes (the sum of Size of the
// records to come) with one tail update, for records appended to the
// Batch and published together by CommitBatch.
func (p *Producer) TryClaimBatch(size int) (Batch, error) {
	total, err := p.CheckBatchSize(size, p.capacity)
	if err != nil {
		return Batch{}, err
	}
	// The fast path, as in TryClaim: the batch's marker (its negated
	// length; the type comes with the first Append) and the new tail guess
	// in one call.
	if index, tail, ok := p.ClaimFast(total); ok {
		atomicbuf.StoreOrdered64Pair(p.WordAt(index), HeaderWord(-total, 0), &p.hint, tail+int64(total))
		return p.BatchAt(index, total), nil
	}
	index, err := p.Claim(total)
	if err != nil {
		return Batch{}, err
	}
	return p.ClaimedBatch(index, total), nil
}

// Mark writes the claim marker of a record (or of a whole batch: total is
// its aligned length) with its type, as one 8-byte ordered store
// (atomicbuf.StoreOrdered64), the first store into claimed space: no later
// store of the claim becomes visible before it. Unblock relies on both
// (the package documentation, "Claim markers"). The payload after it is
// plain stores, published later by the commit.
func (p *Producer) Mark(index, total int, typeID int32) {
	atomicbuf.StoreOrdered64(p.WordAt(index), HeaderWord(-total, typeID))
}

// Publish commits the record at index: the release store of its positive
// length publishes the type and payload written before it.
func (p *Producer) Publish(index, recordLength int) {
	atomicbuf.StoreRelease32(p.LengthAt(index), int32(recordLength))
}

// PublishClaim publishes the records of a claim of total bytes at index,
// whose header word the producer found to be marker (the claim's marker,
// with the first record's type), by giving the first record its length
// recordLength. Where Unblock may pad the claim (many), it does so with a
// compare-and-swap of the whole header word, as Unblock does: of the two,
// exactly one changes the word. A plain store of the first record's
// length after Unblock's would shrink the padding to the first record and
// publish the records after it, a run delivered torn; instead the commit
// reports ErrAborted, and the consumer skips the whole claim as padding. A
// single record (Commit) publishes the length Unblock wrote, so it keeps
// the plain store: see Unblock for what remains.
func (p *Producer) PublishClaim(index int, marker int64, total, recordLength int) error {
	if !p.many { // one-to-one: nobody else writes the header
		p.Publish(index, recordLength)
		return nil
	}
	if testHookPublishClaim != nil {
		testHookPublishClaim(index)
	}
	if int32(marker) != -int32(total) ||
		!p.WordAt(index).CompareAndSwap(marker, HeaderWord(recordLength, int32(marker>>32))) {
		return fmt.Errorf("%w (%w): the claim at %d was unblocked before its commit", ErrAborted, ErrNotClaimed, index+HeaderLength)
	}
	return nil
}

// testHookPublishClaim, when set by a test, runs just before a many-to-one
// PublishClaim's compare-and-swap, to simulate an Unblock meanwhile.
var testHookPublishClaim func(index int)

// WriteRecord writes a record into claimed space at index: marker, payload,
// publication.
func (p *Producer) WriteRecord(index int, typeID int32, payload []byte) {
	recordLength := len(payload) + HeaderLength
	p.Mark(index, recordLength, typeID)
	copy(p.Payload(index, len(payload)), payload)
	p.Publish(index, recordLength)
}

// Claimed marks claimed space at index for a record of type typeID and
// length payload bytes and returns it as a Claim.
func (p *Producer) Claimed(index int, typeID int32, length int) Claim {
	p.Mark(index, length+HeaderLength, typeID)
	return Claim{Index: index + HeaderLength, Payload: p.Payload(index, length)}
}
