package agent

import (
	"context"
	"errors"
)

// Agent is a unit of work run in duty cycles by a runner (package runner),
// an Invoker or a composite (NewComposite). See the package documentation for the contract.
type Agent interface {
	// OnStart is called once, on the agent's thread, before the first
	// DoWork. A non-nil error aborts the start; OnClose is still called.
	OnStart() error
	// DoWork performs one duty cycle and returns its work count: > 0 when
	// work was done, 0 when there was nothing to do. Negative counts are
	// allowed as error codes and mean "no work". A non-nil error is
	// reported; an error matching ErrTermination stops the agent.
	DoWork() (int, error)
	// OnClose is called exactly once after the last DoWork, or after a
	// failed OnStart, or when the agent is closed before it ever started.
	OnClose() error
	// RoleName names the agent's role in thread names, statistics, logs
	// and errors.
	RoleName() string
}

// ContextAware is an optional interface for agents that may block (in a
// syscall, on a channel) and must notice a stop request while blocked:
// Go has no thread interrupt. Whoever drives the agent calls BindContext
// once, on the agent's thread, before OnStart; the context is cancelled as
// soon as the agent is asked to stop (runner Close, Invoker Close), and a
// runner or an Invoker cancels it before OnClose in any case (after a
// termination, a failed start or a Stop policy too), so nothing tied to it
// outlives the agent. (The members of a composite (NewComposite) share its
// context; each member of a DynamicComposite gets a child context, cancelled when it is
// removed.) An
// agent that returns ctx.Err() (context.Canceled) after the cancellation is
// not reported as failing.
type ContextAware interface {
	BindContext(ctx context.Context)
}

// ErrTermination is the common sentinel of the termination errors: an
// agent's DoWork returns an error for which errors.Is(err, ErrTermination)
// holds to ask its runner to stop it (Agrona's AgentTerminationException).
// Return ErrDone (expected) or ErrTerminated (unexpected), or build one with
// Terminate, rather than ErrTermination itself, which counts as unexpected.
var ErrTermination = errors.New("agent: termination")

// ErrTerminated asks the runner to stop the agent because something went
// wrong: the runner stops it and reports the error to its error handler,
// without counting it as an error (the agent is no longer running).
//
// errors.Is(ErrTerminated, ErrTermination) is true;
// errors.Is(ErrTerminated, ErrDone) is false.
var ErrTerminated error = &terminationError{}

// ErrDone asks the runner to stop the agent because its work is complete:
// the runner stops it silently (Agrona 2.6's expected termination).
//
// errors.Is(ErrDone, ErrTermination) is true;
// errors.Is(ErrDone, ErrTerminated) is false.
var ErrDone error = &terminationError{Expected: true}

// terminationError is the type of ErrDone, ErrTerminated and of the errors
// Terminate builds. It matches ErrTermination under errors.Is and unwraps to
// its Cause.
type terminationError struct {
	Expected bool  // true: stop silently; false: stop and report
	Cause    error // optional reason
}

// Terminate returns an unexpected termination error carrying cause.
func Terminate(cause error) error { return &terminationError{Cause: cause} }

func (e *terminationError) Error() string {
	msg := "agent: terminated"
	if e.Expected {
		msg = "agent: done"
	}
	if e.Cause != nil {
		msg += ": " + e.Cause.Error()
	}
	return msg
}

// Is makes every terminationError match ErrTermination.
func (e *terminationError) Is(target error) bool { return target == ErrTermination }

// Unwrap returns the cause.
func (e *terminationError) Unwrap() error { return e.Cause }

// IsTermination reports whether err asks to stop the agent, and whether that
// stop is expected (silent). Plain ErrTermination is unexpected.
//
// A joined error (errors.Join, or fmt.Errorf with several %w) asks to stop
// if any of its errors does, and the stop is expected only if every one of
// its errors is an expected termination: errors.Join(err, ErrDone) stops
// the agent and reports err rather than dropping it.
func IsTermination(err error) (terminate, expected bool) {
	if err == nil {
		return false, false
	}
	if te, ok := err.(*terminationError); ok { // no allocation on the common path
		return true, te.Expected
	}
	return classify(err)
}

// classify walks err's tree as errors.Is does: the first terminationError
// on a chain decides for that chain (its Cause is the reason for the stop,
// not another error); ErrTermination, or an error whose Is method matches
// it, is an unexpected termination; a joined error is expected only if all
// of its branches are.
func classify(err error) (terminate, expected bool) {
	for err != nil {
		if te, ok := err.(*terminationError); ok {
			return true, te.Expected
		}
		if err == ErrTermination {
			return true, false
		}
		if x, ok := err.(interface{ Is(error) bool }); ok && x.Is(ErrTermination) {
			return true, false
		}
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		case interface{ Unwrap() []error }:
			all := true
			for _, e := range u.Unwrap() {
				if e == nil {
					continue
				}
				t, x := classify(e)
				terminate = terminate || t
				all = all && t && x
			}
			return terminate, terminate && all
		default:
			return false, false
		}
	}
	return false, false
}
