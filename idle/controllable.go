package idle

import "sync/atomic"

// Modes of a Controllable strategy: the values of the status word, as in
// Agrona's ControllableIdleStrategy. A word never set (0, Agrona's
// NOT_CONTROLLED) parks, as any other value does.
const (
	ModeNoOp     int64 = 1
	ModeBusySpin int64 = 2
	ModeYield    int64 = 3
	ModePark     int64 = 4 // park 1 µs
)

// controllableStrategy picks its idle step from a shared 64-bit status word
// that it reads atomically on every idle call (alias "controllable").
//
// The word is typically a counter in a shared counters file, so an operator
// tool can switch a running agent between modes at run time. Writers must
// store it atomically.
type controllableStrategy struct {
	word *atomic.Int64
	st   State
}

// Controllable returns a strategy controlled by word. A nil word panics:
// it is a programming error, not a run-time condition.
func Controllable(word *atomic.Int64) Strategy {
	if word == nil {
		panic("idle: Controllable with a nil status word")
	}
	return &controllableStrategy{word: word}
}

// Idle returns at once when workCount > 0, else takes one step (IdleOnce).
func (c *controllableStrategy) Idle(workCount int) {
	if workCount > 0 {
		c.st = StateNotIdle
		return
	}
	c.IdleOnce()
}

// IdleOnce reads the status word and acts on it.
func (c *controllableStrategy) IdleOnce() {
	switch c.word.Load() {
	case ModeNoOp:
		c.st = StateSpinning
	case ModeBusySpin:
		c.st = StateSpinning
		doSpin()
	case ModeYield:
		c.st = StateYielding
		doYield()
	default:
		c.st = StateParking
		doPark(controllablePark)
	}
}

// Reset does nothing but the state report: the strategy has no back-off.
func (c *controllableStrategy) Reset() { c.st = StateNotIdle }

// State reports the step taken by the last idle call.
func (c *controllableStrategy) State() State { return c.st }

// Alias returns "controllable".
func (c *controllableStrategy) Alias() string { return aliasControllable }

// String returns "controllable". Parse cannot rebuild it: the status word
// has no textual form.
func (c *controllableStrategy) String() string { return aliasControllable }
