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
	// ErrArgument reports an argument the package refuses; the wrapping
	// error says which: regions of the wrong size (an empty or oversized
	// values region, a metadata region smaller than 4 times the values
	// region, a combined buffer that Split cannot cut, more counters than
	// one pair of regions holds); a region whose first byte is not 8-byte
	// aligned (those errors also wrap atomicbuf.ErrMisaligned); a key
	// longer than 112 bytes; a counter id outside 0..MaxCounterID; an
	// invalid Config (a negative reuse timeout).
	ErrArgument = errors.New("counters: invalid argument")
	// ErrCorrupt reports a record that a correct manager cannot have
	// written: an unknown state, a label length outside 0..380.
	// Shared memory written by another process is never trusted.
	ErrCorrupt = sentinel.Corrupt("counters: corrupt record")
	// ErrInUse reports that NewManager was given regions that already hold
	// counters: a second manager over live regions would hand out ids in
	// use (Agrona issue #293). Use Recover for a restarted owner.
	ErrInUse = errors.New("counters: regions already hold counters")
)

func outOfRange(id, maxID int) error {
	return fmt.Errorf("%w: counter id %d out of range: 0 - maxCounterId=%d", ErrArgument, id, maxID)
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
}
