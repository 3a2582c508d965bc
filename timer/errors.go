package timer

import "errors"

var (
	// ErrConfig: NewWheel was given a Config it refuses. The wrapping
	// error names the field: a Resolution that is not a positive power of
	// two; TicksPerWheel not a power of two in [1, 2^30]; TickAllocation or
	// MaxTickAllocation not a power of two in [1, 2^30], or the initial
	// above the maximum; TicksPerWheel x MaxTickAllocation above 2^39 (ids
	// would keep fewer than 24 bits of generation); or TicksPerWheel x
	// TickAllocation above 2^30 initial slots.
	ErrConfig = errors.New("timer: invalid wheel configuration")
	// ErrDeadline: Schedule was given math.MaxInt64, the value that marks
	// an empty slot.
	ErrDeadline = errors.New("timer: deadline is math.MaxInt64, the empty-slot marker")
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
