package record

import "fmt"

// Unblock releases the consumer from a claim left open by a producer that
// died (or hung) between claiming and committing, by turning the claimed
// space into padding: the consumer's side of the many-to-one claim
// protocol, here because it must agree with PublishClaim (of the two
// compare-and-swaps of a claim's header, exactly one succeeds). It reports whether it did. Call it only from the
// consumer's side and only after the consumer position has not moved for
// longer than a producer liveness timeout while the producer position is
// ahead: a producer that is merely slow would write into space the consumer
// has already passed.
//
// Two cases (docs/agrona.md, "Unblocking a dead producer"): the claim's header holds a negative length
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
func (p *Producer) Unblock() (bool, error) {
	head := p.head.Load()
	tail := p.tail.Load()
	if head == tail {
		return false, nil
	}
	if head&(Alignment-1) != 0 || tail&(Alignment-1) != 0 || tail < head || tail-head > int64(p.capacity) {
		return false, fmt.Errorf("%w: head %d, tail %d", ErrCorrupt, head, tail)
	}
	consumerIndex := int(head & p.mask)
	producerIndex := int(tail & p.mask)
	// The whole header: the padding replaces it with one compare-and-swap
	// (pad, below), so a producer's store into it meanwhile is never mixed
	// with Unblock's.
	header := p.WordAt(consumerIndex).Load()
	length := int32(header)
	switch {
	case length < 0:
		// CheckClaim negates in 64 bits: -MinInt32 is MinInt32 in 32,
		// which passed the bounds check and was "unblocked" without
		// changing anything. A claim shorter than a header is no claim a
		// producer makes.
		if !CheckClaim(consumerIndex, p.capacity, length) {
			return false, errCorruptRecord(consumerIndex, p.capacity, length, *p.TypeAt(consumerIndex))
		}
		return p.pad(consumerIndex, header, int(-length)), nil
	case length == 0:
		limit := p.capacity
		if producerIndex > consumerIndex {
			limit = producerIndex
		}
		gapEnd := -1
		for i := consumerIndex + Alignment; i < limit; i += Alignment {
			if p.LengthAt(i).Load() != 0 {
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
			if limit != p.capacity || tail-head <= int64(p.capacity-consumerIndex) {
				return false, nil
			}
			gapEnd = p.capacity
		}
		if testHookUnblockScan != nil {
			testHookUnblockScan(consumerIndex, gapEnd)
		}
		for i := gapEnd - Alignment; i >= consumerIndex; i -= Alignment {
			if p.LengthAt(i).Load() != 0 {
				return false, nil // a slow producer wrote meanwhile
			}
		}
		return p.pad(consumerIndex, header, gapEnd-consumerIndex), nil
	}
	return false, nil
}

// pad turns the claim at index, whose header Unblock found to be header,
// into a padding record of length bytes, in one compare-and-swap of the
// header word (the package documentation, "Claim markers"): it reports
// false, changing nothing, if the header changed since (the producer is
// alive). After the swap the producer's own stores keep the record padding
// or make it an open claim again; the one hazard left is Unblock's.
func (p *Producer) pad(index int, header int64, length int) bool {
	if testHookUnblockPad != nil {
		testHookUnblockPad(index)
	}
	return p.WordAt(index).CompareAndSwap(header, HeaderWord(length, PaddingTypeID))
}

// testHookUnblockScan, when set by a test, runs between Unblock's forward
// scan and its backward re-check, to simulate a producer writing meanwhile.
var testHookUnblockScan func(consumerIndex, gapEnd int)

// testHookUnblockPad, when set by a test, runs just before Unblock writes
// the padding header, to simulate a producer's store landing meanwhile.
var testHookUnblockPad func(consumerIndex int)
