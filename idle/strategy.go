package idle

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// Strategy decides what an agent's thread does between duty cycles.
//
// The canonical loop is
//
//	for running {
//		s.Idle(agent.DoWork())
//	}
//
// A loop that tests for work itself calls Reset once when it finds none and
// then IdleOnce until work appears.
//
// Strategies may keep state (Backoff does): use one instance per agent and
// never share one between goroutines. None of the methods is safe for
// concurrent use, and none allocates.
type Strategy interface {
	// Idle is called after every duty cycle with its work count. A count
	// greater than zero means work was done: the strategy resets any
	// back-off state and returns at once. A count of zero or less (no work,
	// or an error code) performs one idle step.
	Idle(workCount int)
	// IdleOnce performs the current idle step unconditionally (Agrona's
	// idle()).
	IdleOnce()
	// Reset clears back-off state, before or after an idle period.
	Reset()
	// Alias is the strategy's short name, as accepted by Parse ("spin",
	// "backoff", ...).
	Alias() string
	// String returns a spec that Parse turns back into an equivalent
	// strategy, for example "backoff:10:5:1µs:1ms".
	String() string
}

// State is what an idle strategy is doing, for statistics and monitoring.
type State int32

// States of an idle strategy. The values follow Agrona's BackoffIdleStrategy
// (NOT_IDLE=0, SPINNING=1, YIELDING=2, PARKING=3).
const (
	StateNotIdle  State = 0 // work was done on the last cycle, or never idled
	StateSpinning State = 1 // busy spinning (or doing nothing at all)
	StateYielding State = 2 // yielding the CPU to other threads
	StateParking  State = 3 // sleeping the thread
)

func (s State) String() string {
	switch s {
	case StateNotIdle:
		return "not-idle"
	case StateSpinning:
		return "spinning"
	case StateYielding:
		return "yielding"
	case StateParking:
		return "parking"
	}
	return "state(" + strconv.Itoa(int(s)) + ")"
}

// StateReporter is implemented by every strategy of this package. State
// reports the step the last call to Idle or IdleOnce took (StateNotIdle after
// Reset or after a cycle with work). Like the other methods it must be called
// from the goroutine that idles.
type StateReporter interface {
	State() State
}

// Aliases of the built-in strategies, as in Agrona.
const (
	aliasNoOp         = "noop"
	aliasBusySpin     = "spin"
	aliasYielding     = "yield"
	aliasSleepingNs   = "sleep-ns"
	aliasSleepingMs   = "sleep-ms"
	aliasBackoff      = "backoff"
	aliasControllable = "controllable"
)

// Defaults, as in Agrona.
const (
	defaultSleepPeriod   = time.Microsecond // SleepingIdleStrategy.DEFAULT_SLEEP_PERIOD_NS
	defaultSleepMsPeriod = time.Millisecond // SleepingMillisIdleStrategy.DEFAULT_SLEEP_PERIOD_MS
	defaultMaxSpins      = 10
	defaultMaxYields     = 5
	defaultMinPark       = time.Microsecond
	defaultMaxPark       = time.Millisecond
	// controllablePark is what a Controllable strategy sleeps in park mode.
	controllablePark = time.Microsecond
)

// noOp does nothing at all.
type noOp struct{ st State }

// NoOp returns a strategy that does nothing when idle: the thread runs duty
// cycles back to back at full speed.
func NoOp() Strategy { return &noOp{} }

func (s *noOp) Idle(workCount int) {
	if workCount > 0 {
		s.st = StateNotIdle
		return
	}
	s.st = StateSpinning
}
func (s *noOp) IdleOnce()      { s.st = StateSpinning }
func (s *noOp) Reset()         { s.st = StateNotIdle }
func (s *noOp) Alias() string  { return aliasNoOp }
func (s *noOp) String() string { return aliasNoOp }
func (s *noOp) State() State   { return s.st }

// busySpin executes hints CPU spin-wait hints per idle step.
type busySpin struct {
	st    State
	hints int
}

// maxSpinHints bounds NewBusySpin's hints per idle step: 65,536 PAUSEs is
// about a millisecond on current x86 cores, past which parking is the
// better wait.
const maxSpinHints = 1 << 16

// BusySpin returns a strategy that executes one CPU spin-wait hint (x86
// PAUSE) when idle: Agrona's BusySpinIdleStrategy. Lowest wake-up latency;
// burns a whole core.
func BusySpin() Strategy { return &busySpin{hints: 1} }

// NewBusySpin returns a strategy that executes hints CPU spin-wait hints
// (1 to 65,536) per idle step, or an error wrapping ErrBadSpec. It
// still never leaves the CPU, but polls less often: a consumer that keeps
// catching up with a fast producer and polls the cache line the producer
// is writing slows the producer down, and spacing the polls out with more
// hints per step kept W1 out of that contended regime (docs/idle.md,
// "Spinning with more hints"). The price is up to one step's hints in
// wake-up latency.
func NewBusySpin(hints int) (Strategy, error) {
	if hints < 1 || hints > maxSpinHints {
		return nil, fmt.Errorf("%w: %d spin hints per idle step, want 1 to %d", ErrBadSpec, hints, maxSpinHints)
	}
	return &busySpin{hints: hints}, nil
}

func (s *busySpin) Idle(workCount int) {
	if workCount > 0 {
		s.st = StateNotIdle
		return
	}
	s.IdleOnce()
}

func (s *busySpin) IdleOnce() {
	s.st = StateSpinning
	for range s.hints {
		doSpin()
	}
}
func (s *busySpin) Reset()        { s.st = StateNotIdle }
func (s *busySpin) Alias() string { return aliasBusySpin }
func (s *busySpin) State() State  { return s.st }

func (s *busySpin) String() string {
	if s.hints == 1 {
		return aliasBusySpin
	}
	return aliasBusySpin + ":" + strconv.Itoa(s.hints)
}

// yielding gives the CPU to other threads.
type yielding struct{ st State }

// Yielding returns a strategy that yields the CPU to another runnable OS
// thread when idle (sched_yield(2) on Linux, like Java's Thread.yield; see
// docs/idle.md for why not runtime.Gosched).
func Yielding() Strategy { return &yielding{} }

func (s *yielding) Idle(workCount int) {
	if workCount > 0 {
		s.st = StateNotIdle
		return
	}
	s.st = StateYielding
	doYield()
}
func (s *yielding) IdleOnce()      { s.st = StateYielding; doYield() }
func (s *yielding) Reset()         { s.st = StateNotIdle }
func (s *yielding) Alias() string  { return aliasYielding }
func (s *yielding) String() string { return aliasYielding }
func (s *yielding) State() State   { return s.st }

// sleeping parks the thread for a fixed period.
type sleeping struct {
	period time.Duration
	millis bool
	st     State
}

// Sleeping returns a strategy that parks the thread for period when idle
// (Agrona's SleepingIdleStrategy, alias "sleep-ns"). A period <= 0 means no
// sleep (and is kept as 0: String gives "sleep-ns:0"). The thread really
// sleeps period plus its timer slack.
func Sleeping(period time.Duration) Strategy { return &sleeping{period: max(period, 0)} }

// maxMillis is the longest whole number of milliseconds a time.Duration holds.
const maxMillis = math.MaxInt64 / int64(time.Millisecond)

// sleepingMillis is Sleeping with a whole number of milliseconds (Agrona's
// SleepingMillisIdleStrategy, alias "sleep-ms"): Parse's "sleep-ms:MS". ms <= 0 means no sleep
// (kept as 0); ms beyond what a time.Duration holds (about 292 years) is
// the longest whole number of milliseconds it holds.
func sleepingMillis(ms int) Strategy {
	m := min(max(int64(ms), 0), maxMillis)
	return &sleeping{period: time.Duration(m) * time.Millisecond, millis: true}
}

func (s *sleeping) Idle(workCount int) {
	if workCount > 0 {
		s.st = StateNotIdle
		return
	}
	s.IdleOnce()
}

func (s *sleeping) IdleOnce() {
	s.st = StateParking
	doPark(s.period)
}
func (s *sleeping) Reset() { s.st = StateNotIdle }
func (s *sleeping) Alias() string {
	if s.millis {
		return aliasSleepingMs
	}
	return aliasSleepingNs
}
func (s *sleeping) String() string {
	if s.millis {
		return aliasSleepingMs + ":" + strconv.FormatInt(int64(s.period/time.Millisecond), 10)
	}
	return aliasSleepingNs + ":" + strconv.FormatInt(int64(s.period), 10)
}
func (s *sleeping) State() State { return s.st }

// The three primitive idle actions. Tests replace them to record exact
// traces; nothing else writes them.
var (
	doSpin  = spinHint
	doYield = osYield
	doPark  = park
)
