// Package runner runs an agent (package agent) on its own goroutine locked
// to an OS thread, in the duty-cycle loop of Agrona's AgentRunner, and
// runs groups of agents with restart policies (Group).
//
// # Lifecycle
//
//	r, err := runner.New(a, runner.WithIdle(idle.Backoff()), runner.WithCPUs(1))
//	err = r.Start()  // once
//	...
//	err = r.Close()  // any number of times, from any goroutine
//
// Start starts a goroutine, locks it to its thread with
// runtime.LockOSThread (never unlocked: the thread ends with the agent),
// names the thread after the role (prctl(PR_SET_NAME), 15 bytes, visible in
// top -H), applies CPU affinity and timer slack if asked, binds the agent's
// context (agent.ContextAware) and calls OnStart there. Start returns when
// OnStart has returned; a failure of the thread setup or of OnStart (a
// panic in it included) is returned by Start, after OnClose has run.
//
// The loop, on the agent's thread, until the stop flag is set:
//
//	cachedClock.Update(now)    // only with WithCachedClock
//	n, err := agent.DoWork()   // panics are recovered into *PanicError
//	if err != nil { handle(err) }
//	statistics
//	idle.Idle(n)
//
// The stop flag is an atomic read once per cycle; the loop never blocks on
// a channel. Unlike Agrona, a failing cycle idles too, so an agent that
// fails on every cycle does not spin through its error handler. After the
// loop, OnClose runs on the same thread, then Done is closed.
//
// # Errors
//
//   - agent.ErrDone (expected termination): the agent stops silently.
//   - Other termination errors (agent.ErrTerminated, agent.Terminate): the
//     agent stops; the error handler is called; not counted. Err returns it.
//   - Any other error: counted (Stats.Errors, and the errors counter of
//     WithCounters, while the agent is running), passed to the handler; the
//     agent keeps running, unless WithStopOnError (the default for a Group
//     member with a RestartPolicy) stops it and makes Err return it.
//   - A panic in DoWork: a *PanicError with the value and the stack, counted
//     and reported as above; it stops the agent (WithStopOnPanic, on by
//     default), even if
//     the value is (or wraps) a termination error or context.Canceled: a
//     panic never counts as a request to stop. OnClose still runs when the
//     agent stops.
//   - context.Canceled returned after Close cancelled the agent's context:
//     the stop it asked for, not an error. A termination error returned
//     after Close asked for the stop (agent.Terminate(ctx.Err()) on the
//     cancelled context) stops the agent as asked and is not Err; it is
//     reported unless its cause is context.Canceled.
//   - A callback or the error handler that ends the agent's goroutine
//     (runtime.Goexit; t.FailNow in a test agent): OnClose still runs (unless
//     it was what exited), the live counters are freed and Done is closed;
//     the error wraps ErrGoexit. Start returns it if it happened before
//     OnStart returned; otherwise the handler gets it, and Err returns it
//     if it happened in the duty cycle before any stop was asked.
//
// The error handler runs on the agent's thread. The default one logs with
// log/slog, by error identity rather than text, at most a few lines a
// second per agent, and accounts for every error it does not write in a
// summary line, so that the counts of its lines add up to the errors
// handled (WithErrorHandler, docs/runner.md).
//
// # Close
//
// Close and CloseContext set the stop flag and cancel the agent's context,
// then wait for Done (never on thread liveness) up to 5 s (Close) or the
// context's end (CloseContext): an agent that does not stop in time gives
// an error wrapping context.DeadlineExceeded (or the context's error) that
// names the role; closing
// again later waits again. Called on the agent's own thread (from DoWork,
// OnStart or the error handler), Close only sets the flag and returns nil:
// no self-join, no deadlock. Before Start, Close runs OnClose on the
// calling goroutine and Start then fails with ErrClosed; a Close from that
// OnClose or from the error handler it calls returns nil at once as well
// (the closing goroutine is locked to its thread meanwhile and detected by
// its thread id; off Linux neither case is detected and such a Close waits
// for its timeout). Closing an agent that has already stopped returns nil,
// even with an ended context. Close is idempotent and safe to call
// concurrently; every caller waits.
//
// # Cached clock
//
// WithCachedClock reuses the stall tracker's clock reading (internal/ticks,
// an RDTSC where usable; without the stall tracker the clock is read all
// the same): a cycle's value is the reading taken at the end of the
// previous DoWork when the idle step between was a spin or nothing, and is
// read again after a yield or a park. Ticks become nanoseconds by
// extrapolation from a clock.System reading taken again every millisecond,
// so the value is behind clock.System by the skew of that pair and ahead
// of it only by the ticks rate's calibration error over a millisecond
// (below a millionth of it). The update is part of the cycle that Stats.MaxCycle times,
// with once a millisecond the re-anchoring (two clock.System reads, more
// if the thread is interrupted between them; during ticks' calibration, in
// the first 50 ms of the process, a rate measurement on every cycle).
// Without the option the loop pays nothing; docs/clock.md has the cost per
// cycle.
//
// # Statistics
//
// Stats returns, from any goroutine and without locks, the duty cycles,
// total work, idle cycles, counted errors, the longest duty cycle (the stall
// tracker, one clock read per cycle; WithCycleTiming(false) turns it off)
// and the idle strategy's current state. The counters are written by the
// agent's thread only, on cache lines of their own.
//
// # Groups and supervision
//
// A Group (NewGroup) runs several agents together: it starts them in the
// order given (within the caller's context: a slow OnStart cannot overrun
// it), closes them in reverse order, and, if one fails to start, closes
// every other one (those not started yet without starting them, so every
// agent's OnClose runs once). A member made by a New function may have a
// RestartPolicy: when its agent stops by itself with an error (Err), the
// group makes a fresh agent and restarts it after a back-off, at most Max
// times within Window; one failure more, or a failure of a member without
// a policy, ends the group: every member is closed and Err says which
// agent ended it and why (an error naming it, wrapping ErrGaveUp and the
// agent's error). A restart policy covers the errors DoWork returns (its
// runners get WithStopOnError(true) unless the member's Options set it);
// each restart is logged and counted (Restarts, and a "restarts: <role>"
// counter beside WithCounters). Package dutyfx runs a Group with an fx
// application.
package runner
