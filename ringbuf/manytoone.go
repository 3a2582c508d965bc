package ringbuf

import (
	"github.com/dutyrt/duty/internal/atomicbuf"
	"github.com/dutyrt/duty/internal/record"
)

// ManyToOne is a ring buffer for any number of concurrent producers and one
// consumer (Agrona's ManyToOneRingBuffer). Producers claim space with a CAS
// on the tail; the consumer zeroes the space it has consumed before it
// releases it, which lets Unblock recognise space claimed by a producer that
// died before writing anything.
//
// Its producer protocol is the record core's (internal/record, Producer:
// written once, and used by the mailbox as well), and so is its tail
// guess: this view's, never ahead of the tail; a wrong one costs one
// failed CAS (docs/ringbuf.md, "Fast paths").
type ManyToOne struct {
	ring
}

// NewManyToOne returns a many-to-one ring over buf, which must be a power of
// two (at least minCapacityManyToOne) plus TrailerLength bytes long and start
// on an 8-byte boundary. It never writes to buf: a new ring's memory must
// already be zero (as from Allocate or a new file), and a second view of a
// live ring (another process's) sees its contents as they are.
func NewManyToOne(buf []byte) (*ManyToOne, error) {
	r := &ManyToOne{}
	if err := r.init(buf, true); err != nil {
		return nil, err
	}
	return r, nil
}

// SetDemote turns on or off the consumer's demotion of the lines it
// releases to the cache all cores share (CLDEMOTE, on CPUs that have it),
// where producers on other cores claim them sooner. It is on in a new ring
// of at least 8 KiB. Each demotion costs the consumer time: turn it off
// where the consumer is the slower end (behind producers that publish many
// records per claim) or shares a core with its producers (docs/ringbuf.md,
// "Demoting released lines"). Consumer only; it changes nothing in the
// ring's memory or protocol, and other views of the ring decide for
// themselves.
func (r *ManyToOne) SetDemote(on bool) { r.rd.SetDemote(on) }

// Write copies payload into the ring as one message of type typeID. It
// returns ErrFull, unwrapped and without allocating, when there is no room.
// Safe for concurrent use by any number of producers.
func (r *ManyToOne) Write(typeID int32, payload []byte) error {
	p := &r.p
	if typeID < 1 || uint(len(payload)) > uint(p.MaxMessageLength()) {
		return p.MessageError(typeID, len(payload))
	}
	// The record core's Write, with its fast path in line here, as
	// mailbox.Send runs it: a payload of up to 64 bytes that fits before
	// the end of the ring when the cached head says there is room takes
	// one CAS attempt (a failed one goes to the general path), then one
	// call writes the claim marker, the payload and the length, and stores
	// the new tail guess (record.PublishRecord). Nothing is live after it,
	// so nothing spills. A call of the core's Write from here would not
	// inline (it is too large), so a producer that calls Write through an
	// interface, as cmd/dutybench does, would pay one
	// more call frame per message: stores to the stack that queue behind
	// the ring stores (docs/ringbuf.md, "Fast paths").
	if len(payload) <= record.MaxPayload {
		size := record.Size(len(payload))
		if index, tail, ok := p.ClaimFast(size); ok {
			p.PublishFast(index, record.Marker(len(payload), typeID), payload, tail+int64(size))
			return nil
		}
	}
	return p.WriteSlow(typeID, payload)
}

// TryClaim claims space for a message of length payload bytes. Fill
// Claim.Payload and then call Commit or Abort with Claim.Index: always one of
// them, even on error paths, or the consumer stops at the claim until
// Unblock. Other producers can keep claiming space after it meanwhile.
//
// The record core's TryClaim, composed here from its steps (as Write is,
// and for the same reason: one frame for a call through an interface).
func (r *ManyToOne) TryClaim(typeID int32, length int) (Claim, error) {
	p := &r.p
	if typeID < 1 || uint(length) > uint(p.MaxMessageLength()) {
		return Claim{}, p.MessageError(typeID, length)
	}
	aligned := record.Size(length)
	// The fast path: one CAS attempt from the tail guess when the record
	// fits before the end and the cached head says there is room; then a
	// single call stores the claim marker (the negated record length) with
	// the type as one 8-byte word, the first store into the claim and
	// ordered before every later one (record.Producer.Mark), and the new
	// guess.
	if index, tail, ok := p.ClaimFast(aligned); ok {
		atomicbuf.StoreOrdered64Pair(p.WordAt(index), record.Marker(length, typeID), p.Hint(), tail+int64(aligned))
		return Claim{Index: index + HeaderLength, Payload: p.Payload(index, length)}, nil
	}
	index, err := p.Claim(aligned)
	if err != nil {
		return Claim{}, err
	}
	return Claim(p.Claimed(index, typeID, length)), nil
}

// TryClaimBatch claims size contiguous bytes (the sum of RecordSize of the
// records to come) with one tail update. Append records to the Batch, then
// call CommitBatch (one publication for all of them) or AbortBatch.
func (r *ManyToOne) TryClaimBatch(size int) (Batch, error) {
	b, err := r.p.TryClaimBatch(size)
	return Batch{b}, err
}

// TryClaimRecords claims count records of type typeID, each with a payload
// of length bytes, with one tail update (one compare-and-swap). Fill their
// payloads (Records.Payload), then call CommitRecords or AbortRecords:
// always one of them, as for TryClaim.
func (r *ManyToOne) TryClaimRecords(typeID int32, length, count int) (Records, error) {
	total, err := r.checkRecords(typeID, length, count)
	if err != nil {
		return Records{}, err
	}
	// The record core's fast claim, as in TryClaim: the marker (negated
	// length and the type, one 8-byte word, ordered: see
	// record.Producer.Mark) and the new tail guess in one call.
	if index, tail, ok := r.p.ClaimFast(total); ok {
		atomicbuf.StoreOrdered64Pair(r.p.WordAt(index), record.HeaderWord(-total, typeID), r.p.Hint(), tail+int64(total))
		return r.records(index, length, count), nil
	}
	index, err := r.p.Claim(total)
	if err != nil {
		return Records{}, err
	}
	r.p.Mark(index, total, typeID)
	return r.records(index, length, count), nil
}

// Unblock releases the consumer from a claim left open by a producer that
// died (or hung) between claiming and committing, by turning the claimed
// space into padding, and reports whether it did. Call it only from the
// consumer's side and only after the consumer position has not moved for
// longer than a producer liveness timeout while the producer position is
// ahead: a producer that is merely slow would write into space the consumer
// has already passed.
//
// It pads a claim whose header holds a negative length, or an all-zero
// claim up to the next non-zero header (to the end of the ring, unlike
// Agrona, when the producers have wrapped), with one compare-and-swap of
// the header it checked: if a producer stored into it meanwhile, Unblock
// reports false and changes nothing, so a slow producer's record is never
// delivered torn. The exception: a Batch's first Append stores its type
// into the batch's marker, and after Unblock padded the batch that turns
// the padding into one record covering the batch (docs/agrona.md,
// "Unblocking a dead producer").
func (r *ManyToOne) Unblock() (bool, error) { return r.p.Unblock() }
