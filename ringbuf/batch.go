package ringbuf

import "github.com/dutyrt/duty/internal/record"

// Batch is contiguous space claimed by TryClaimBatch with a single tail
// update. Append records into it, then pass it to exactly one of
// CommitBatch, which publishes every record at once (one store of the first
// record's length: on a many-to-one ring a compare-and-swap, so a commit
// that comes after Unblock padded the batch returns ErrAborted), or
// AbortBatch. The consumer sees the records as separate messages, in order,
// with no other producer's record between them.
//
// Until it is completed, the claim marker of the batch's first record covers
// the whole batch, so Unblock turns an abandoned batch into a single padding
// record: a consumer sees all of a batch or none of it.
//
// A Batch is the record core's batch cursor (internal/record), four
// words, so that Go passes and returns it in registers (see Records for
// what a fifth costs).
type Batch struct {
	b record.Batch
}

// Append adds a record of type typeID with a payload of length bytes and
// returns its payload space, aliasing the ring, to fill before the commit.
func (b *Batch) Append(typeID int32, length int) ([]byte, error) { return b.b.Append(typeID, length) }

// Remaining returns the bytes still free in the batch. Space left at the
// commit is published as padding.
func (b *Batch) Remaining() int { return b.b.Remaining() }

// Commit publishes the claim whose Index is index. Complete a claim once: a
// second Commit or Abort of the same index returns ErrNotClaimed only while
// the space is still what the claim left; once another claim has taken the
// same index (many-to-one: another producer's, still being written), a
// stray second Commit would publish it. The index carries no generation,
// as in Agrona; mailbox.Claim, which owns its state, refuses a second
// completion.
func (r *ring) Commit(index int) error {
	// The core's two steps, not its Commit: one frame per message.
	recordIndex, length, err := r.p.OpenClaim(index)
	if err != nil {
		return err
	}
	r.p.Publish(recordIndex, int(-length))
	return nil
}

// Abort discards the claim whose Index is index: the consumer skips its space
// as padding. Composed here as Commit is.
func (r *ring) Abort(index int) error {
	recordIndex, length, err := r.p.OpenClaim(index)
	if err != nil {
		return err
	}
	*r.p.TypeAt(recordIndex) = paddingTypeID
	r.p.Publish(recordIndex, int(-length))
	return nil
}

// CommitBatch publishes every record appended to b at once. Unused space at
// the end becomes padding; a batch with no record is aborted.
func (r *ring) CommitBatch(b Batch) error { return r.p.CommitBatch(b.b) }

// AbortBatch discards b: the consumer skips its whole space as one padding
// record.
func (r *ring) AbortBatch(b Batch) error { return r.p.AbortBatch(b.b) }

// WriteBatch writes payloads as len(payloads) messages of type typeID with
// one claim and one publication: all of them or (ErrFull) none. They are
// contiguous in the ring, so no other producer's message falls between
// them.
func (r *ring) WriteBatch(typeID int32, payloads [][]byte) error {
	total, err := r.p.CheckPayloads(typeID, payloads, r.claimLimit)
	if err != nil {
		return err
	}
	index, err := r.claim(total)
	if err != nil {
		return err
	}
	r.p.WriteBatchAt(index, total, typeID, payloads)
	return nil
}

// claim reserves aligned bytes, the ring type's way: the record core's
// many-to-one claim, or the one-to-one claim (onetoone.go). One branch on
// a field, where WriteBatch, the one caller that serves both types, would
// otherwise need an indirect call.
func (r *ring) claim(aligned int) (int, error) {
	if r.many {
		return r.p.Claim(aligned)
	}
	return r.claimOneToOne(aligned)
}
