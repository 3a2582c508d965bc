package record

import "fmt"

// CheckMessage reports whether a record of type typeID and length payload
// bytes is one this ring carries. Small enough to inline on the hot
// paths; the errors are built out of line (MessageError).
func (p *Producer) CheckMessage(typeID int32, length int) error {
	if typeID >= 1 && uint(length) <= uint(p.maxMsgLength) {
		return nil
	}
	return p.MessageError(typeID, length)
}

// MessageError is the error for a record CheckMessage refuses (nil for one
// it accepts): ErrTypeID, ErrLength or ErrTooLong, wrapped with details.
func (p *Producer) MessageError(typeID int32, length int) error {
	if typeID < 1 {
		return fmt.Errorf("%w: msgTypeId=%d, want at least 1", ErrTypeID, typeID)
	}
	if length < 0 {
		return fmt.Errorf("%w: length=%d", ErrLength, length)
	}
	if length > p.maxMsgLength {
		return fmt.Errorf("%w: maxMsgLength=%d, length=%d", ErrTooLong, p.maxMsgLength, length)
	}
	return nil
}

// CheckBatchSize validates the size of a batch claim and returns it
// aligned. limit is the most a claim can ever get (the capacity, less the
// header a one-to-one ring zeroes after each claim).
func (p *Producer) CheckBatchSize(size, limit int) (int, error) {
	if size < HeaderLength {
		return 0, fmt.Errorf("%w: batch of %d bytes", ErrLength, size)
	}
	if size > limit {
		return 0, fmt.Errorf("%w: batch of %d bytes exceeds the ring's %d bytes", ErrTooLong, size, limit)
	}
	return Align(size), nil
}

// CheckPayloads validates the records of a batch of payloads of type
// typeID against limit (as CheckBatchSize's) and returns their total size.
func (p *Producer) CheckPayloads(typeID int32, payloads [][]byte, limit int) (int, error) {
	if len(payloads) == 0 {
		return 0, fmt.Errorf("%w: empty batch", ErrLength)
	}
	total := 0
	for _, pl := range payloads {
		if err := p.CheckMessage(typeID, len(pl)); err != nil {
			return 0, err
		}
		total += Size(len(pl))
		if total > limit {
			return 0, fmt.Errorf("%w: batch of %d records exceeds the ring's %d bytes", ErrTooLong, len(payloads), limit)
		}
	}
	return total, nil
}

// OpenClaim validates a Commit or Abort index (a Claim's Index: the
// payload's offset) and returns the record offset and its negated
// (claimed) length.
func (p *Producer) OpenClaim(index int) (int, int32, error) {
	recordIndex := index - HeaderLength
	if recordIndex < 0 || recordIndex > p.capacity-HeaderLength || recordIndex%Alignment != 0 {
		return 0, 0, fmt.Errorf("%w: index=%d", ErrIndex, index)
	}
	length := p.LengthAt(recordIndex).Load()
	if length >= 0 {
		switch {
		case length == 0:
			return 0, 0, fmt.Errorf("%w: index=%d", ErrNotClaimed, index)
		case *p.TypeAt(recordIndex) == PaddingTypeID:
			return 0, 0, fmt.Errorf("%w (%w): index=%d", ErrAborted, ErrNotClaimed, index)
		default:
			return 0, 0, fmt.Errorf("%w (%w): index=%d", ErrCommitted, ErrNotClaimed, index)
		}
	}
	if int64(recordIndex)-int64(length) > int64(p.capacity) {
		return 0, 0, fmt.Errorf("%w: claim of %d bytes at %d runs past the end of the ring", ErrCorrupt, -length, recordIndex)
	}
	return recordIndex, length, nil
}

// Commit publishes the claim whose Index is index. A claim is completed
// once: a second Commit or Abort of the same index returns ErrCommitted
// while the space is still what the claim left, but once the consumer has
// passed it and another claim has taken the same index (many-to-one:
// another producer's, still being written), the index is that claim's and
// a stray second Commit would publish it. The index carries no
// generation, as in Agrona; a layer that owns its claims' state (the
// mailbox's Claim) refuses a second completion itself.
func (p *Producer) Commit(index int) error {
	recordIndex, length, err := p.OpenClaim(index)
	if err != nil {
		return err
	}
	p.Publish(recordIndex, int(-length))
	return nil
}

// Abort discards the claim whose Index is index: the consumer skips its
// space as padding.
func (p *Producer) Abort(index int) error {
	recordIndex, length, err := p.OpenClaim(index)
	if err != nil {
		return err
	}
	*p.TypeAt(recordIndex) = PaddingTypeID
	p.Publish(recordIndex, int(-length))
	return nil
}
