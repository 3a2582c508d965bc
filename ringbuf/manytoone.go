package ringbuf

import (
	"fmt"
	"unsafe"

	"github.com/dutyrt/duty/internal/atomicbuf"
	"github.com/dutyrt/duty/internal/record"
)

// ManyToOne is a ring buffer for any number of concurrent producers and one
// consumer (Agrona's ManyToOneRingBuffer). Producers claim space with a CAS
// on the tail; the consumer zeroes the space it has consumed before it
// releases it, which lets Unblock recognise space claimed by a producer that
// died before writing anything.
type ManyToOne struct {
	ring

	// fast is the producers' fast path (internal/record, shared with
	// mailbox.Send): a copy of where the ring is, and the tail guess that
	// every claim, fast or general, starts from and updates. The guess is
	// this view's (so per process), never ahead of the tail; a wrong one
	// costs one failed CAS (docs/ringbuf.md, "Fast paths"). The guess is
	// on cache lines of its own.
	fast record.Producer
}

func init() {
	record.SetOf(func(ring any) *record.Producer { return &ring.(*ManyToOne).fast })
}

// NewManyToOne returns a many-to-one ring over buf, which must be a power of
// two (at least MinCapacityManyToOne) plus TrailerLength bytes long and start
// on an 8-byte boundary. It never writes to buf: a new ring's memory must
// already be zero (as from Allocate or a new file), and a second view of a
// live ring (another process's) sees its contents as they are.
func NewManyToOne(buf []byte) (*ManyToOne, error) {
	r := &ManyToOne{}
	if err := r.init(buf, true); err != nil {
		return nil, err
	}
	r.fast.Init(r.base, r.capacity, r.tail, r.headCache)
	return r, nil
}

// SetDemote turns on or off the consumer's demotion of the lines it
// releases (docs/ringbuf.md, "Demoting released lines"). It is on in a
// new ring of at least 8 KiB: after a read releases space, the consumer
// asks for the lines it zeroed to move from its core's caches to the cache
// all cores share (CLDEMOTE, on CPUs that have it), where producers on
// other cores claim them sooner. That speeds up producers that publish a
// record per claim (Write, TryClaim, a mailbox's sends) by a third or more
// on the project's machines, and costs the consumer time for each line: a
// loss where the consumer is the slower end, as behind producers that
// publish many records per claim (TryClaimRecords, batches) or on the same
// core as its producers. Consumer only; it changes nothing in the ring's
// memory or protocol, and other views of the ring (other processes) decide
// for themselves.
func (r *ManyToOne) SetDemote(on bool) { r.rd.SetDemote(on) }

// Demotes reports whether this view's consumer demotes the lines it
// releases (SetDemote).
func (r *ManyToOne) Demotes() bool { return r.rd.Demotes() }

// claim reserves required (aligned) bytes and returns the record index.
// Agrona's algorithm (agrona.md 3.5), including the rule that a record that
// fits neither at the end of the ring nor at its start still pads the end
// and reports ErrFull, so the consumer can move head to the start.
func (r *ManyToOne) claim(required int) (int, error) {
	head := r.headCache.Load()
	tail := r.fast.Hint().Load()
	for {
		if tail&(RecordAlignment-1) != 0 {
			return 0, fmt.Errorf("%w: tail position %d is not aligned", ErrCorrupt, tail)
		}
		if int64(required) > int64(r.capacity)-(tail-head) {
			head = r.head.Load()
			if int64(required) > int64(r.capacity)-(tail-head) {
				// The guess never runs ahead of a tail that only grows;
				// a tail rewritten backwards (a trailer reinitialised in a
				// shared file) would leave it there, and this view would
				// report ErrFull for ever on an empty ring. So full is
				// decided on the tail itself: one more load, only here.
				if t := r.tail.Load(); t != tail {
					tail = t
					atomicbuf.StoreRelease64(r.fast.Hint(), t)
					continue
				}
				return 0, ErrFull
			}
			atomicbuf.StoreRelease64(r.headCache, head)
		}
		padding := 0
		tailIndex := int(tail & r.mask)
		toEnd := r.capacity - tailIndex
		writeIndex := tailIndex
		newTail := tail + int64(required)
		if required > toEnd {
			writeIndex = 0
			if headIndex := int(head & r.mask); required > headIndex {
				head = r.head.Load()
				if required > int(head&r.mask) {
					writeIndex = -1
					newTail = tail
				}
				atomicbuf.StoreRelease64(r.headCache, head)
			}
			padding = toEnd
			newTail += int64(padding)
		}
		// The guess only ever lags the tail, so a stale one claims nothing
		// and reports ErrFull only when the real tail would too.
		if !r.tail.CompareAndSwap(tail, newTail) {
			tail = r.tail.Load()
			continue
		}
		atomicbuf.StoreRelease64(r.fast.Hint(), newTail)
		if padding != 0 {
			// Same protocol as a record: marker, type, publication.
			r.mark(tailIndex, padding, PaddingTypeID)
			r.publish(tailIndex, padding)
		}
		if writeIndex < 0 {
			return 0, ErrFull
		}
		return writeIndex, nil
	}
}

// Write copies payload into the ring as one message of type typeID. It
// returns ErrFull, unwrapped and without allocating, when there is no room.
// Safe for concurrent use by any number of producers.
func (r *ManyToOne) Write(typeID int32, payload []byte) error {
	if typeID < 1 || uint(len(payload)) > uint(r.maxMsgLength) {
		return r.messageError(typeID, len(payload))
	}
	length := len(payload) + HeaderLength
	aligned := record.Align(length)
	// The fast path, for a payload of up to 64 bytes that fits before the
	// end of the ring when the cached head says there is room: one CAS
	// attempt (a failed one goes to the general loop), then one call writes
	// the claim marker, the payload and the length, and stores the new tail
	// guess (record.PublishRecord). Nothing is live after it, so nothing
	// spills. mailbox.Send runs the same two steps in line.
	if len(payload) <= record.MaxPayload {
		if index, tail, ok := r.fast.Claim(aligned); ok {
			r.fast.Publish(index, record.Marker(len(payload), typeID), payload, tail+int64(aligned))
			return nil
		}
	}
	return r.writeSlow(typeID, payload)
}

// writeSlow is Write when the fast path does not apply: a long payload, a
// wrap, a stale guess or head cache, a full ring, or a corrupt tail. A
// separate function, so that Write keeps nothing live across a call.
func (r *ManyToOne) writeSlow(typeID int32, payload []byte) error {
	index, err := r.claim(record.Size(len(payload)))
	if err != nil {
		return err
	}
	r.writeRecord(index, typeID, payload)
	return nil
}

// TryClaim claims space for a message of length payload bytes. Fill
// Claim.Payload and then call Commit or Abort with Claim.Index: always one of
// them, even on error paths, or the consumer stops at the claim until
// Unblock. Other producers can keep claiming space after it meanwhile.
func (r *ManyToOne) TryClaim(typeID int32, length int) (Claim, error) {
	if typeID < 1 || uint(length) > uint(r.maxMsgLength) {
		return Claim{}, r.messageError(typeID, length)
	}
	aligned := record.Size(length)
	// The fast path, as in Write: one CAS attempt from the tail guess when
	// the record fits before the end and the cached head says there is
	// room; then a single call stores the claim marker (the negated record
	// length) with the type as one 8-byte word, the first store into the
	// claim and ordered before every later one (see mark), and the new
	// guess.
	if index, tail, ok := r.fast.Claim(aligned); ok {
		atomicbuf.StoreOrdered64Pair(r.wordAt(index), record.Marker(length, typeID), r.fast.Hint(), tail+int64(aligned))
		p := index + HeaderLength
		return Claim{Index: p, Payload: unsafe.Slice((*byte)(unsafe.Add(r.base, p)), length)}, nil
	}
	index, err := r.claim(aligned)
	if err != nil {
		return Claim{}, err
	}
	return r.claimed(index, typeID, length), nil
}

// WriteBatch writes payloads as len(payloads) messages of type typeID with
// one claim and one publication: all of them or (ErrFull) none. They are
// contiguous in the ring, so no other producer's message falls between them.
func (r *ManyToOne) WriteBatch(typeID int32, payloads [][]byte) error {
	total, err := r.checkPayloads(typeID, payloads, r.capacity)
	if err != nil {
		return err
	}
	index, err := r.claim(total)
	if err != nil {
		return err
	}
	r.writeBatch(index, total, typeID, payloads)
	return nil
}

// TryClaimBatch claims size contiguous bytes (the sum of RecordSize of the
// records to come) with one tail update. Append records to the Batch, then
// call CommitBatch (one publication for all of them) or AbortBatch.
func (r *ManyToOne) TryClaimBatch(size int) (Batch, error) {
	total, err := r.checkBatchSize(size, r.capacity)
	if err != nil {
		return Batch{}, err
	}
	// The fast path, as in TryClaim: the batch's marker (its negated
	// length; the type comes with the first Append) and the new tail guess
	// in one call.
	if index, tail, ok := r.fast.Claim(total); ok {
		atomicbuf.StoreOrdered64Pair(r.wordAt(index), record.HeaderWord(-total, 0), r.fast.Hint(), tail+int64(total))
		return r.batchAt(index, total), nil
	}
	index, err := r.claim(total)
	if err != nil {
		return Batch{}, err
	}
	return r.claimedBatch(index, total), nil
}

// TryClaimRecords claims count records of type typeID, each with a payload
// of length bytes, with one tail update (one compare-and-swap). Fill their
// payloads (Records.Payload), then call CommitRecords or AbortRecords:
// always one of them, as for TryClaim.
func (r *ManyToOne) TryClaimRecords(typeID int32, length, count int) (Records, error) {
	total, err := r.checkRecords(typeID, length, count, r.capacity)
	if err != nil {
		return Records{}, err
	}
	// The fast path, as in TryClaimBatch: the marker (negated length and
	// the type, one 8-byte word) and the new tail guess in one call.
	if index, tail, ok := r.fast.Claim(total); ok {
		atomicbuf.StoreOrdered64Pair(r.wordAt(index), record.HeaderWord(-total, typeID), r.fast.Hint(), tail+int64(total))
		return r.records(index, length, count), nil
	}
	index, err := r.claim(total)
	if err != nil {
		return Records{}, err
	}
	r.mark(index, total, typeID)
	return r.records(index, length, count), nil
}

// Unblock releases the consumer from a claim left open by a producer that
// died (or hung) between claiming and committing, by turning the claimed
// space into padding. It reports whether it did. Call it only from the
// consumer's side and only after the consumer position has not moved for
// longer than a producer liveness timeout while the producer position is
// ahead: a producer that is merely slow would write into space the consumer
// has already passed.
//
// Two cases (agrona.md 3.10): the claim's header holds a negative length
// (the producer died after marking it), or the claim is still all zeros (it
// died right after its CAS), in which case the gap ends at the next non-zero
// header, re-checked backwards. Unlike Agrona, a zero claim that runs to the
// end of the ring while the producers have wrapped is padded to the end too;
// Agrona leaves that ring blocked.
//
// Also unlike Agrona, the padding header (type and length) is one
// compare-and-swap of the header Unblock checked: if a producer stored into
// it meanwhile, Unblock reports false and changes nothing. So a slow
// producer's record is never delivered torn (its type under Unblock's
// length, its payload not yet written), with one exception: a Batch's first
// Append stores the type into the batch's marker, and after Unblock padded
// the batch that store turns the padding into one record of that type
// covering the whole batch, delivered if the consumer has not passed it.
func (r *ManyToOne) Unblock() (bool, error) {
	head := r.head.Load()
	tail := r.tail.Load()
	if head == tail {
		return false, nil
	}
	if head&(RecordAlignment-1) != 0 || tail&(RecordAlignment-1) != 0 || tail < head || tail-head > int64(r.capacity) {
		return false, fmt.Errorf("%w: head %d, tail %d", ErrCorrupt, head, tail)
	}
	consumerIndex := int(head & r.mask)
	producerIndex := int(tail & r.mask)
	// The whole header: the padding replaces it with one compare-and-swap
	// (pad, below), so a producer's store into it meanwhile is never mixed
	// with Unblock's.
	header := r.wordAt(consumerIndex).Load()
	length := int32(header)
	switch {
	case length < 0:
		// Negated in 64 bits: -MinInt32 is MinInt32 in 32, which passed the
		// bounds check and was "unblocked" without changing anything. A
		// claim shorter than a header is no claim a producer makes.
		if claim := -int64(length); claim < HeaderLength || int64(consumerIndex)+int64(record.Align(int(claim))) > int64(r.capacity) {
			return false, r.errCorruptRecord(consumerIndex, length, *r.typeAt(consumerIndex))
		}
		return r.pad(consumerIndex, header, int(-length)), nil
	case length == 0:
		limit := r.capacity
		if producerIndex > consumerIndex {
			limit = producerIndex
		}
		gapEnd := -1
		for i := consumerIndex + RecordAlignment; i < limit; i += RecordAlignment {
			if r.lengthAt(i).Load() != 0 {
				gapEnd = i
				break
			}
		}
		if gapEnd < 0 {
			// Nothing written after the dead claim. If the producers have
			// wrapped past the end, the whole rest of the ring is the claim.
			// A claim that ends exactly at the end, with nothing claimed
			// after it (tail at index 0 of the next lap), is left alone as
			// in the middle of the ring: it may be a slow producer's, whose
			// late record would land in space the consumer has passed.
			if limit != r.capacity || tail-head <= int64(r.capacity-consumerIndex) {
				return false, nil
			}
			gapEnd = r.capacity
		}
		if testHookUnblockScan != nil {
			testHookUnblockScan(consumerIndex, gapEnd)
		}
		for i := gapEnd - RecordAlignment; i >= consumerIndex; i -= RecordAlignment {
			if r.lengthAt(i).Load() != 0 {
				return false, nil // a slow producer wrote meanwhile
			}
		}
		return r.pad(consumerIndex, header, gapEnd-consumerIndex), nil
	}
	return false, nil
}

// pad turns the claim at index, whose header Unblock found to be header,
// into a padding record of length bytes, in one compare-and-swap of the
// header word: it reports false, changing nothing, if the header changed
// since (the producer is alive). Type and length in two stores, as in
// Agrona, let a slow producer's header store fall between them, leaving its
// type under Unblock's length: a committed record whose payload is not
// written yet. After the swap, the producer's own stores keep the record
// padding (the length it publishes is the same, the type stays) or make it
// an open claim again (a whole marker); the heuristic's hazard is then
// only the one documented on Unblock.
func (r *ManyToOne) pad(index int, header int64, length int) bool {
	if testHookUnblockPad != nil {
		testHookUnblockPad(index)
	}
	return r.wordAt(index).CompareAndSwap(header, record.HeaderWord(length, PaddingTypeID))
}

// testHookUnblockScan, when set by a test, runs between Unblock's forward
// scan and its backward re-check, to simulate a producer writing meanwhile.
var testHookUnblockScan func(consumerIndex, gapEnd int)

// testHookUnblockPad, when set by a test, runs just before Unblock writes
// the padding header, to simulate a producer's store landing meanwhile.
var testHookUnblockPad func(consumerIndex int)
