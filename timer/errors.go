package timer

import (
	"errors"
	"fmt"
)

var (
	// ErrArgument: NewWheel was given a Config it refuses, or Schedule a
	// deadline of math.MaxInt64 (the value that marks an empty slot). For
	// a Config the wrapping error names the field: a Resolution that is
	// not a positive power of two; TicksPerWheel not a power of two in
	// [1, 2^30]; TickAllocation or MaxTickAllocation not a power of two in
	// [1, 2^30], or the initial above the maximum; TicksPerWheel x
	// MaxTickAllocation above 2^39 (ids would keep fewer than 24 bits of
	// generation); or TicksPerWheel x TickAllocation above 2^30 initial
	// slots.
	ErrArgument = errors.New("timer: invalid argument")
	// ErrCapacity: a tick is full and doubling it would exceed the wheel's
	// maximum tick allocation. Nothing was scheduled.
	ErrCapacity = errors.New("timer: tick allocation limit reached")
	// ErrBusy: ResetStartTime or SetCurrentTickTime was called while timers
	// are scheduled, or from a handler during Poll.
	ErrBusy = errors.New("timer: wheel in use")
)

// errDeadline and errInPoll are made once: Schedule and the resets return
// them without allocating.
var (
	errDeadline = fmt.Errorf("%w: deadline is math.MaxInt64, the empty-slot marker", ErrArgument)
	errInPoll   = fmt.Errorf("%w: called from a poll handler", ErrBusy)
)
