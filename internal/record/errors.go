package record

import (
	"errors"
	"fmt"

	"github.com/dutyrt/duty/internal/sentinel"
)

// The errors the core returns: the sentinels package ringbuf exports
// (ringbuf.ErrFull is ErrFull, and so on), defined here so that the core,
// and the layers that produce through it directly (the mailbox), return
// the very values ringbuf documents; their texts name ringbuf for that
// reason. ErrFull is returned unwrapped (no allocation, comparable with
// ==); the others are wrapped with details (test with errors.Is).
var (
	ErrFull       = errors.New("ringbuf: insufficient capacity")
	ErrTypeID     = errors.New("ringbuf: message type id out of range")
	ErrLength     = errors.New("ringbuf: invalid message length")
	ErrTooLong    = errors.New("ringbuf: message exceeds max message length")
	ErrIndex      = errors.New("ringbuf: invalid claim index")
	ErrNotClaimed = errors.New("ringbuf: record is not an open claim")
	ErrCommitted  = errors.New("ringbuf: claimed space previously committed")
	ErrAborted    = errors.New("ringbuf: claimed space previously aborted")
	ErrCorrupt    = sentinel.Corrupt("ringbuf: corrupt ring buffer")
)

// errCorruptRecord describes a record that no correct producer writes.
func errCorruptRecord(index, capacity int, length, typeID int32) error {
	return fmt.Errorf("%w: record at %d has length %d and type %d (capacity %d)", ErrCorrupt, index, length, typeID, capacity)
}
