package ringbuf

import (
	"errors"

	"github.com/dutyrt/duty/internal/corrupt"
)

// Sentinel errors. Functions wrap them with details (fmt.Errorf with %w);
// test with errors.Is. ErrFull is returned unwrapped, so a full ring costs no
// allocation and can be compared with ==.
var (
	// ErrFull reports that the ring has no room for the record now. Nothing
	// was written; retry after the consumer has made progress.
	ErrFull = errors.New("ringbuf: insufficient capacity")
	// ErrCapacity reports a buffer whose length is not a power of two plus
	// TrailerLength, or whose capacity is below the minimum.
	ErrCapacity = errors.New("ringbuf: capacity must be a positive power of 2 + TrailerLength")
	// ErrMisaligned reports a buffer that does not start on an 8-byte boundary.
	ErrMisaligned = errors.New("ringbuf: buffer is not 8-byte aligned")
	// ErrTypeID reports a message type id below 1.
	ErrTypeID = errors.New("ringbuf: message type id must be greater than zero")
	// ErrLength reports a negative message length or record count.
	ErrLength = errors.New("ringbuf: invalid message length")
	// ErrTooLong reports a message longer than MaxMessageLength, or a batch
	// that can never fit in the ring.
	ErrTooLong = errors.New("ringbuf: message exceeds max message length")
	// ErrIndex reports a Commit or Abort index that cannot be a claim's index.
	ErrIndex = errors.New("ringbuf: invalid claim index")
	// ErrNotClaimed reports a Commit or Abort of an index whose record is not
	// an open claim: never claimed, or already committed or aborted.
	ErrNotClaimed = errors.New("ringbuf: record is not an open claim")
	// ErrCommitted reports a second completion of a claim that was committed.
	// It wraps ErrNotClaimed.
	ErrCommitted = errors.New("ringbuf: claimed space previously committed")
	// ErrAborted reports a second completion of a claim that was aborted.
	// It wraps ErrNotClaimed.
	ErrAborted = errors.New("ringbuf: claimed space previously aborted")
	// ErrCorrupt reports ring contents that no correct producer or consumer
	// writes: a record running past the end of the ring, a misaligned
	// position, an invalid type id. The ring is shared with other processes,
	// so it is an error and never a panic.
	ErrCorrupt = corrupt.New("ringbuf: corrupt ring buffer")
	// ErrNilHandler reports a read without a handler.
	ErrNilHandler = errors.New("ringbuf: nil handler")
)
