package ringbuf

import (
	"errors"

	"github.com/dutyrt/duty/internal/record"
)

// Sentinel errors. Functions wrap them with details (fmt.Errorf with %w);
// test with errors.Is. ErrFull is returned unwrapped, so a full ring costs no
// allocation and can be compared with ==. The ones a claim, a commit or a
// read returns are the record core's values (internal/record), so that
// every layer that produces or reads through the core directly (the
// mailbox) returns these very sentinels.
var (
	// ErrFull reports that the ring has no room for the record now. Nothing
	// was written; retry after the consumer has made progress.
	ErrFull = record.ErrFull
	// ErrCapacity reports a buffer that cannot hold a ring: its length is
	// not a power of two plus TrailerLength, its capacity is below the
	// minimum, or it does not start on an 8-byte boundary. The wrapping
	// error says which.
	ErrCapacity = errors.New("ringbuf: unusable ring buffer")
	// ErrTypeID reports a message type id the structure does not carry:
	// below 1, or (a publication) above its largest.
	ErrTypeID = record.ErrTypeID
	// ErrLength reports a negative message length or record count.
	ErrLength = record.ErrLength
	// ErrTooLong reports a message longer than MaxMessageLength, or a batch
	// that can never fit in the ring.
	ErrTooLong = record.ErrTooLong
	// ErrNotClaimed reports a Commit or Abort of an index whose record is not
	// an open claim: never claimed, or already committed or aborted (a
	// second completion of a committed claim wraps it alone). A Commit or
	// Abort of an index that cannot be a claim's index (not a record start
	// inside the ring) fails with another error.
	ErrNotClaimed = record.ErrNotClaimed
	// ErrAborted reports a second completion of a claim that was aborted.
	// It wraps ErrNotClaimed.
	ErrAborted = record.ErrAborted
	// ErrCorrupt reports ring contents that no correct producer or consumer
	// writes: a record running past the end of the ring, a misaligned
	// position, an invalid type id. The ring is shared with other processes,
	// so it is an error and never a panic. It is a corruption sentinel
	// (internal/corrupt): errors.Is(err, duty.ErrCorrupt) holds.
	ErrCorrupt = record.ErrCorrupt
	// ErrNilHandler reports a read without a handler.
	ErrNilHandler = errors.New("ringbuf: nil handler")
)
