package runner

import (
	"fmt"
	"time"

	"github.com/dutyrt/duty/clock"
	ipccounters "github.com/dutyrt/duty/counters"
	"github.com/dutyrt/duty/idle"
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
	stopOnError    bool
	stopOnErrorSet bool // WithStopOnError was given: a Group keeps it
	stopOnPanic    bool
	noCycleTiming  bool
	liveCounters   *ipccounters.Manager
	clock          *clock.Cached
	errs           []error
}

// Option configures a Runner.
type Option func(*config)

// refuseIf records an option's refusal (an error wrapping ErrBadOption,
// saying what) when bad holds, for New to return, and reports bad.
func (c *config) refuseIf(bad bool, what string) bool {
	if bad {
		c.errs = append(c.errs, fmt.Errorf("%w: %s", ErrBadOption, what))
	}
	return bad
}

// WithIdle sets the idle strategy (default: a new idle.Backoff()). A
// strategy keeps state: give each runner its own instance. New refuses
// one that a runner which has not stopped uses already (ErrBadOption).
func WithIdle(s idle.Strategy) Option {
	return func(c *config) {
		c.refuseIf(s == nil, "nil idle strategy")
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
		c.refuseIf(d <= 0, fmt.Sprintf("timer slack %v <= 0", d))
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
		c.refuseIf(h == nil, "nil error handler")
		c.handler = h
	}
}

// WithStopOnError sets whether the runner stops the agent after DoWork
// returns an error that is not a termination error (Err then returns the
// error). Off by default: the error is reported and the agent keeps
// running, Agrona's behaviour for exceptions; on for the runners of a Group
// member with a RestartPolicy, so that the policy restarts it.
func WithStopOnError(stop bool) Option {
	return func(c *config) { c.stopOnError, c.stopOnErrorSet = stop, true }
}

// WithStopOnPanic sets whether the runner stops the agent after DoWork
// panics (Err then returns the *PanicError). On by default: a panic usually
// leaves the agent's state broken. OnClose runs in either case when the
// agent stops.
func WithStopOnPanic(stop bool) Option { return func(c *config) { c.stopOnPanic = stop } }

// WithCycleTiming turns the stall tracker (Stats.MaxCycle) on (the default)
// or off. It costs one clock read per duty cycle: an RDTSC where the CPU's
// time-stamp counter is a usable clock, time.Since elsewhere (docs/runner.md,
// "Costs"). Off, MaxCycle stays 0. The timed span is DoWork and
// error handling, plus the previous idle step when that was a spin or
// nothing.
func WithCycleTiming(on bool) Option { return func(c *config) { c.noCycleTiming = !on } }

// WithCounters makes the duty cycle itself keep five counters of m (the
// owner's Manager of an ipc counters file, typically) up to date: duty
// cycles, total work, errors, longest cycle and idle cycles, labelled
// "<statistic>: <role>" (docs/counters.md), so other processes (cmd/dutystat) watch
// the runner live. They are allocated by New (which fails if m cannot
// supply them) and freed when the agent has stopped. The cost is two
// release stores (MOVs on amd64) per cycle, three on a busy one; without
// this option the loop pays nothing.
func WithCounters(m *ipccounters.Manager) Option {
	return func(c *config) {
		if !c.refuseIf(m == nil, "nil counters manager") {
			c.liveCounters = m
		}
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
		if !cfg.refuseIf(c == nil, "nil cached clock") {
			cfg.clock = c
		}
	}
}
