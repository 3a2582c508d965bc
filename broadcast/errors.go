package broadcast

import (
	"errors"
	"fmt"

	"github.com/dutyrt/duty/internal/sentinel"
)

var (
	// ErrCapacity reports a buffer that cannot hold a broadcast ring: its
	// length is not a power of two between minCapacity and maxCapacity
	// plus trailerLength, or its first byte is not 8-byte aligned. The
	// wrapping error says which.
	ErrCapacity = errors.New("broadcast: unusable buffer")
	// ErrTypeID reports a message type id below 1.
	ErrTypeID = errors.New("broadcast: type id must be greater than zero")
	// ErrTooLong reports a payload longer than the buffer's MaxMsgLength
	// (Transmit) or than the copy receiver's scratch buffer (Receive).
	ErrTooLong = errors.New("broadcast: message too long")
	// ErrLapped reports that a copy receiver lost messages: the transmitter
	// overwrote them before they were read ("unable to keep up").
	ErrLapped = errors.New("broadcast: unable to keep up with broadcast")
	// ErrCorrupt reports a buffer whose counters or record headers cannot have
	// been written by a correct transmitter. Shared memory written by another
	// process is never trusted: corruption is reported, never a panic.
	ErrCorrupt = sentinel.Corrupt("broadcast: corrupt buffer")
)

func capacityError(total int) error {
	return fmt.Errorf("%w: length=%d, want a ring of %d..%d bytes (power of 2) + %d", ErrCapacity, total, minCapacity, maxCapacity, trailerLength)
}

func corruptError(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
}
