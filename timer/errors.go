package timer

import "errors"

var (
	// ErrResolution: the tick resolution is not a positive power of two.
	ErrResolution = errors.New("timer: tick resolution is not a positive power of two")
	// ErrTicksPerWheel: ticks per wheel is not a power of two in [1, MaxTicksPerWheel].
	ErrTicksPerWheel = errors.New("timer: ticks per wheel is not a power of two in [1, 2^30]")
	// ErrTickAllocation: the initial or maximum tick allocation is not a
	// power of two in [1, MaxTickAllocation], the initial one exceeds the
	// maximum, TicksPerWheel x the maximum exceeds 2^39 (ids would keep
	// fewer than MinGenerationBits of generation), or TicksPerWheel x the
	// initial one exceeds MaxInitialSlots.
	ErrTickAllocation = errors.New("timer: tick allocation is not a power of two in [1, min(2^30, 2^39/TicksPerWheel)]")
	// ErrDeadline: Schedule was given NullDeadline, the value that marks an
	// empty slot.
	ErrDeadline = errors.New("timer: deadline is NullDeadline (math.MaxInt64)")
	// ErrCapacity: a tick is full and doubling it would exceed the wheel's
	// maximum tick allocation. Nothing was scheduled.
	ErrCapacity = errors.New("timer: tick allocation limit reached")
	// ErrActiveTimers: ResetStartTime or SetCurrentTickTime was called while
	// timers are scheduled.
	ErrActiveTimers = errors.New("timer: timers are active")
	// ErrInPoll: ResetStartTime or SetCurrentTickTime was called from a
	// handler during Poll.
	ErrInPoll = errors.New("timer: called from a poll handler")
)
