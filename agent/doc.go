// Package agent defines the unit of work of duty: an Agent run in duty
// cycles, plus ways to group and drive agents. It follows Agrona's agent
// model (org.agrona.concurrent.Agent and friends); docs/runner.md explains
// how it fits with the runner and the idle strategies.
//
// # Contract
//
// Whoever drives an agent (a runner.Runner on its own locked thread, an
// Invoker on the caller's goroutine, or a composite (NewComposite) inside
// another agent) calls, from one goroutine only:
//
//  1. BindContext(ctx), if the agent implements ContextAware; ctx is
//     cancelled when the agent is asked to stop, and by a runner or an
//     Invoker before OnClose in any case;
//  2. OnStart, once;
//  3. DoWork, repeatedly, until asked to stop or until DoWork returns a
//     termination error;
//  4. OnClose, exactly once.
//
// OnClose runs in every case: after the last DoWork, after a failed
// OnStart, after a panic recovered by the runner (unlike Agrona, where a JVM
// Error skips onClose), and also when the agent is closed before it was
// ever started (then on the closing goroutine, and OnStart never runs). An
// agent therefore needs no locks for its own state.
//
// # Work counts
//
// DoWork returns how much work it did: 0 means "nothing to do", > 0 means
// work was done, and negative values are error codes that count as no work.
// The driver passes the count to an idle strategy (package idle): after a
// cycle with work it returns at once, after an idle cycle it spins, yields
// or sleeps. The agent never sleeps itself: the runner owns the thread and
// the idling. DoWork must return promptly; an agent that must block (in a
// syscall, on a channel) implements ContextAware and returns when its
// context ends.
//
// # Errors and termination
//
// A non-nil error from DoWork is reported to the driver's error handler and
// counted; the agent keeps running unless the driver's policy says stop. To
// ask for a stop, return a termination error, i.e. one matching
// ErrTermination under errors.Is:
//
//   - ErrDone: expected (graceful) termination; stopped silently;
//   - ErrTerminated or Terminate(cause): unexpected; stopped, reported to the
//     error handler, and never counted as an error (as in Agrona 2.6).
//
// Use IsTermination to classify an error. A joined error (errors.Join)
// stops silently only if every error in it is an expected termination, so
// errors.Join(err, ErrDone) stops the agent and still reports err.
//
// # Composition
//
// NewComposite runs a fixed group as one agent on one thread; DynamicComposite
// accepts members added and removed at run time from any goroutine,
// applied on the agent's own thread at the start of its next cycle. Invoker
// drives an agent from the caller's own loop, without a goroutine: for
// users who own their thread, and for deterministic tests.
package agent
