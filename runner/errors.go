package runner

import (
	"errors"
	"fmt"

	"github.com/dutyrt/duty/internal/sentinel"
)

// Errors of the runner. Returned errors wrap them; test with errors.Is.
var (
	// ErrAlreadyStarted: Start was called a second time.
	ErrAlreadyStarted = errors.New("runner: already started")
	// ErrClosed: Start was called after Close.
	ErrClosed = sentinel.Closed("runner: closed")
	// ErrBadOption: an option's value is invalid (New), or the system
	// refused it when Start configured the agent's thread (name, CPU
	// affinity, timer slack: the error says "thread setup").
	ErrBadOption = errors.New("runner: bad option")
	// ErrGoexit: a callback of the agent (BindContext, OnStart, DoWork,
	// OnClose) or the error handler ended the agent's goroutine with
	// runtime.Goexit (t.FailNow in a test agent, for one). OnClose still
	// runs, unless it was what exited. Start returns it if that happened
	// before OnStart returned; Err returns it if it happened in the duty
	// cycle without a stop having been asked; otherwise the handler gets it.
	ErrGoexit = errors.New("runner: agent goroutine exited (runtime.Goexit)")
)

// PanicError is what the error handler receives when an agent callback
// panics: the recovered value and the stack of the panicking goroutine.
type PanicError struct {
	Role  string // the agent's role
	Value any    // the value passed to panic
	Stack []byte // runtime/debug.Stack() at the recovery
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("runner: agent %s panicked: %v\n%s", e.Role, e.Value, e.Stack)
}

// Unwrap returns the panic value if it is an error.
func (e *PanicError) Unwrap() error {
	if err, ok := e.Value.(error); ok {
		return err
	}
	return nil
}
