package counters

import (
	"errors"
	"fmt"

	"github.com/dutyrt/duty/internal/sentinel"
)

var (
	// ErrFull reports that no counter id is free: every id up to
	// MaxCounterID is allocated, or freed but before its reuse deadline.
	ErrFull = errors.New("counters: unable to allocate counter, buffer is full")
	// ErrNotAllocated reports an operation on an id whose record is not
	// allocated (freeing it twice, adopting a free id).
	ErrNotAllocated = errors.New("counters: counter not allocated")
	// ErrCapacity reports regions of the wrong size: an empty or oversized
	// values region, a metadata region smaller than metadataToValuesRatio
	// times the values region, or a combined buffer that Split cannot cut.
	ErrCapacity = errors.New("counters: invalid capacity")
	// ErrMisaligned reports a region whose first byte is not 8-byte
	// aligned. Errors wrapping it also wrap atomicbuf.ErrMisaligned.
	ErrMisaligned = errors.New("counters: misaligned buffer")
	// ErrKeyTooLong reports a key longer than MaxKeyLength bytes.
	ErrKeyTooLong = errors.New("counters: key too long")
	// ErrCorrupt reports a record that a correct manager cannot have
	// written: an unknown state, a label length outside 0..MaxLabelLength.
	// Shared memory written by another process is never trusted.
	ErrCorrupt = sentinel.Corrupt("counters: corrupt record")
	// ErrOutOfRange reports a counter id outside 0..MaxCounterID.
	ErrOutOfRange = errors.New("counters: counter id out of range")
	// ErrInUse reports that NewManager was given regions that already hold
	// counters: a second manager over live regions would hand out ids in
	// use (Agrona issue #293). Use Recover for a restarted owner.
	ErrInUse = errors.New("counters: regions already hold counters")
	// ErrConfig reports an invalid Config (a negative reuse timeout).
	ErrConfig = errors.New("counters: invalid config")
)

func outOfRange(id, maxID int) error {
	return fmt.Errorf("%w: counter id %d out of range: 0 - maxCounterId=%d", ErrOutOfRange, id, maxID)
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
}
