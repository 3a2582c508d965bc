package runner

import (
	"fmt"
	"time"

	"github.com/dutyrt/duty/clock"
	ipccounters "github.com/dutyrt/duty/counters"
	"github.com/dutyrt/duty/idle"
)

// Policy says what the runner does after an agent's DoWork returns an error
// (other than a termination error) or panics.
type Policy int

const (
	// Continue reports the error and keeps running the agent (Agrona's
	// behaviour for exceptions).
	Continue Policy = iota
	// Stop reports the error and stops the agent; Err returns the error.
	Stop
)

// closeTimeout is how long Close waits for the agent to stop (a variable
// for the tests).
var closeTimeout = 5 * time.Second

type config struct {
	idle           idle.Strategy
	cpus           []int
	threadName     string
	timerSlack     time.Duration
	handler        func(error)
	errorPolicy    Policy
	errorPolicySet bool // WithErrorPolicy was given: a Group keeps it
	panicPolicy    Policy
	noCycleTiming  bool
	liveCounters   *ipccounters.Manager
	clock          *clock.Cached
	errs           []error
}

// Option configures a Runner.
type Option func(*config)

// WithIdle sets the idle strategy (default: a new idle.Backoff()). A
// strategy keeps state: give each runner its own instance. New refuses
// one that a runner which has not stopped uses already (ErrBadOption).
func WithIdle(s idle.Strategy) Option {
	return func(c *config) {
		if s == nil {
			c.errs = append(c.errs, fmt.Errorf("%w: nil idle strategy", ErrBadOption))
		}
		c.idle = s
	}
}

// WithCPUs pins the agent's thread to the given CPUs with
// sched_setaffinity(2) after locking it. A failure (for example a CPU the
// process may not use) is returned by Start.
func WithCPUs(cpus ...int) Option {
	return func(c *config) {
		for _, cpu := range cpus {
			if cpu < 0 || cpu >= maxCPU {
				c.errs = append(c.errs, fmt.Errorf("%w: CPU %d out of range [0,%d)", ErrBadOption, cpu, maxCPU))
			}
		}
		c.cpus = append([]int(nil), cpus...)
	}
}

// WithThreadName sets the OS thread name (prctl(PR_SET_NAME), shown by
// top -H and ps -L), truncated to 15 bytes on a UTF-8 boundary. Default:
// the agent's role name.
func WithThreadName(name string) Option { return func(c *config) { c.threadName = name } }

// WithTimerSlack sets the agent thread's timer slack
// (prctl(PR_SET_TIMERSLACK), Linux default 50 µs): the kernel may delay a
// sleep's wake-up by up to this much to batch timers. A small slack makes
// the parking phases of Backoff and Sleeping wake close to their period
// (see docs/idle.md for the measured effect). d must be > 0.
func WithTimerSlack(d time.Duration) Option {
	return func(c *config) {
		if d <= 0 {
			c.errs = append(c.errs, fmt.Errorf("%w: timer slack %v <= 0", ErrBadOption, d))
		}
		c.timerSlack = d
	}
}

// WithErrorHandler sets the function called with every reported error. It
// runs on the agent's thread (or on the closing goroutine for an agent
// closed before it started), must return promptly and should not panic (a
// panic is recovered and logged). It may call the runner's Close. Default:
// log with slog.Default at level Error, each error identity (its chain of
// types and the masked first line of its innermost message, not its whole
// text) once, then at every power of ten of its count or once a minute,
// at most a few lines a second per agent, with a line that counts the
// errors not logged (written periodically and when the agent stops): the
// counts of all lines add up to the errors handled (docs/runner.md).
func WithErrorHandler(h func(error)) Option {
	return func(c *config) {
		if h == nil {
			c.errs = append(c.errs, fmt.Errorf("%w: nil error handler", ErrBadOption))
		}
		c.handler = h
	}
}

// WithErrorPolicy sets what happens after DoWork returns an error that is
// not a termination error (default Continue; Stop for the runners of a
// Group member with a RestartPolicy, so that the policy restarts it).
func WithErrorPolicy(p Policy) Option {
	return func(c *config) { c.errorPolicy, c.errorPolicySet = p, true }
}

// WithPanicPolicy sets what happens after DoWork panics (default Stop: a
// panic usually leaves the agent's state broken). OnClose runs in either
// case when the agent stops.
func WithPanicPolicy(p Policy) Option { return func(c *config) { c.panicPolicy = p } }

// WithCycleTiming turns the stall tracker (Stats.MaxCycle) on (the default)
// or off. It costs one clock read per duty cycle: an RDTSC where the CPU's
// time-stamp counter is a usable clock, time.Since elsewhere (docs/runner.md,
// "Costs"). Off, MaxCycle stays 0. The timed span is DoWork and
// error handling, plus the previous idle step when that was a spin or
// nothing.
func WithCycleTiming(on bool) Option { return func(c *config) { c.noCycleTiming = !on } }

// WithCounters makes the duty cycle itself keep five counters of m (the
// owner's Manager of an ipc counters file, typically) up to date, labelled
// as NewStatsCounters labels them: duty cycles, total work, errors,
// longest cycle and idle cycles, so other processes (cmd/dutystat) watch
// the runner live. They are allocated by New (which fails if m cannot
// supply them) and freed when the agent has stopped. The cost is two
// release stores (MOVs on amd64) per cycle, three on a busy one; without
// this option the loop pays nothing.
func WithCounters(m *ipccounters.Manager) Option {
	return func(c *config) {
		if m == nil {
			c.errs = append(c.errs, fmt.Errorf("%w: nil counters manager", ErrBadOption))
			return
		}
		c.liveCounters = m
	}
}

// WithCachedClock makes the runner keep c at clock.System's time (monotonic
// nanoseconds since the process's origin): set before OnStart and before
// every DoWork, so that the agent, and any goroutine it shares c with,
// reads the time with one load, the same value throughout a cycle
// (Agrona's CachedNanoClock). The runner is c's only writer: give each
// runner its own Cached. Its values never decrease; they can lag
// clock.System by the idle step before the cycle and by the skew of an
// anchoring pair, and lead it only by the ticks rate's calibration error
// over a millisecond. The update is part of the cycle the stall tracker
// times (the package documentation, "Cached clock").
func WithCachedClock(c *clock.Cached) Option {
	return func(cfg *config) {
		if c == nil {
			cfg.errs = append(cfg.errs, fmt.Errorf("%w: nil cached clock", ErrBadOption))
			return
		}
		cfg.clock = c
	}
}
