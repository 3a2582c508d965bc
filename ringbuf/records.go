package ringbuf

import (
	"fmt"
	"unsafe"

	"github.com/dutyrt/duty/internal/record"
)

// Records is space for a run of records of one type and one payload
// length, claimed with a single tail update by TryClaimRecords. Fill every
// record's payload (Payload), then pass the Records to exactly one of
// CommitRecords, which writes the records' headers and publishes them all
// at once, or AbortRecords. The consumer sees the records
// as separate messages, in order, with no other producer's record between
// them; until the commit, the claim marker of the first record covers them
// all, so Unblock turns abandoned Records into one padding record.
//
// Records is the batch for a producer's hot loop. A Batch keeps a cursor
// that every Append advances, which is a store to the producer's stack per
// record; on a producer whose stores to ring lines wait for the consumer's
// core, such stores queue behind them, so every record waits too. Filling
// Records stores nothing but the payloads (docs/ringbuf.md, "Batches in a
// hot loop").
//
// Records has four fields on purpose. Go keeps a struct of up to four
// fields in registers; a larger one returned by a call is stored to a
// temporary and copied with 16-byte moves, whose loads cannot be forwarded
// from the 8-byte stores just made and so wait for the store buffer to
// drain, ring stores included: the producer's loop would stall on the
// consumer's core at every claim. CommitRecords therefore identifies the
// ring by the address of the first record.
type Records struct {
	first  unsafe.Pointer // the first record's header, in the ring's memory
	count  int
	stride int // RecordSize(length)
	length int
}

// Len returns the number of records.
func (rs *Records) Len() int { return rs.count }

// Payload returns the payload space of record i, aliasing the ring, to
// fill before the commit; nil when i is not in [0, Len()).
func (rs *Records) Payload(i int) []byte {
	if uint(i) >= uint(rs.count) {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Add(rs.first, i*rs.stride+HeaderLength)), rs.length)
}

// checkRecords validates a run of count records of type typeID and length
// payload bytes against the most one claim may take and returns their
// total size.
func (r *ring) checkRecords(typeID int32, length, count int) (int, error) {
	if err := r.p.CheckMessage(typeID, length); err != nil {
		return 0, err
	}
	if count < 1 {
		return 0, fmt.Errorf("%w: %d records", ErrLength, count)
	}
	stride := RecordSize(length)
	if count > r.claimLimit/stride {
		return 0, fmt.Errorf("%w: %d records of %d bytes exceed the ring's %d bytes", ErrTooLong, count, stride, r.claimLimit)
	}
	return count * stride, nil
}

// records is the Records of claimed, already marked space at index.
func (r *ring) records(index, length, count int) Records {
	return Records{first: r.p.At(index), count: count, stride: RecordSize(length), length: length}
}

// openRecords validates Records for a commit or an abort and returns the
// index of the first record: the ring finds it from the first record's
// payload (record.Log.IndexOf), so Records from another ring, or none, are
// refused.
func (r *ring) openRecords(rs Records) (int, error) {
	index, ok := 0, false
	if rs.first != nil {
		index, ok = r.p.IndexOf(unsafe.Slice((*byte)(unsafe.Add(rs.first, HeaderLength)), 0))
	}
	if !ok {
		return 0, fmt.Errorf("%w: records were not claimed from this ring", ErrNotClaimed)
	}
	recordIndex, length, err := r.p.OpenClaim(index + HeaderLength)
	if err != nil {
		return 0, err
	}
	if total := rs.count * rs.stride; int(-length) != total {
		return 0, fmt.Errorf("%w: records at %d cover %d bytes, ring says %d", ErrNotClaimed, recordIndex, total, -length)
	}
	return recordIndex, nil
}

// CommitRecords writes the headers of the records after the first (plain
// stores: the first record's marker keeps the consumer out) and publishes
// all of them with the first record's length (the record core's
// PublishClaim: on a many-to-one ring a compare-and-swap, so a commit that
// comes after Unblock padded them returns ErrAborted).
func (r *ring) CommitRecords(rs Records) error {
	recordIndex, err := r.openRecords(rs)
	if err != nil {
		return err
	}
	marker := r.p.WordAt(recordIndex).Load()
	header := record.HeaderWord(rs.length+HeaderLength, int32(marker>>32))
	for i := 1; i < rs.count; i++ {
		*(*int64)(unsafe.Add(rs.first, i*rs.stride)) = header
	}
	return r.p.PublishClaim(recordIndex, marker, rs.count*rs.stride, rs.length+HeaderLength)
}

// AbortRecords discards rs: the consumer skips their whole space as one
// padding record.
func (r *ring) AbortRecords(rs Records) error {
	recordIndex, err := r.openRecords(rs)
	if err != nil {
		return err
	}
	*r.p.TypeAt(recordIndex) = paddingTypeID
	r.p.Publish(recordIndex, rs.count*rs.stride)
	return nil
}
