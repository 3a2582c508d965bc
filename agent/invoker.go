package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/dutyrt/duty/clock"
)

// Invoker drives an agent from the caller's own loop: Start once, Invoke
// for each duty cycle, Close once (Agrona's AgentInvoker). It has no idle
// strategy and no goroutine: the caller owns the thread and decides how to
// idle. It is how users who own their thread embed an agent, and how tests
// step an agent deterministically.
//
// An Invoker is not safe for concurrent use: call all its methods from one
// goroutine. It does not recover panics: a panic in a callback propagates
// to the caller. Close called from inside OnStart or DoWork (or from the
// error handler) runs OnClose at once, inside that callback, as Agrona's
// AgentInvoker does; the agent gets no DoWork after it.
type Invoker struct {
	agent   Agent
	handler func(error)
	clock   *clock.Cached
	cancel  context.CancelFunc
	err     error // from an option, returned by NewInvoker

	started, running, closed bool
}

// InvokerOption configures an Invoker.
type InvokerOption func(*Invoker)

// WithErrorHandler sets a function called with every error of the agent
// that is reported (see Invoke). It runs on the invoking goroutine and must
// not panic. By default nothing is called: Invoke and Start return the
// errors.
func WithErrorHandler(h func(error)) InvokerOption { return func(i *Invoker) { i.handler = h } }

// WithCachedClock makes Invoke set c to clock.System's time before every
// DoWork (and Start before OnStart), as runner.WithCachedClock does for a
// runner: the agent reads the time of its cycle with one load. It costs one
// clock.System read per Invoke. A test that drives time itself updates its
// Cached directly instead. A nil c makes NewInvoker fail with an error
// wrapping ErrArgument.
func WithCachedClock(c *clock.Cached) InvokerOption {
	return func(i *Invoker) {
		if c == nil {
			i.err = fmt.Errorf("%w: nil cached clock", ErrArgument)
		}
		i.clock = c
	}
}

// NewInvoker returns an Invoker for a. It fails with an error wrapping
// ErrArgument if a is nil, and with an option's error.
func NewInvoker(a Agent, opts ...InvokerOption) (*Invoker, error) {
	if a == nil {
		return nil, fmt.Errorf("%w: nil agent", ErrArgument)
	}
	i := &Invoker{agent: a}
	for _, o := range opts {
		o(i)
	}
	if i.err != nil {
		return nil, i.err
	}
	return i, nil
}

// tick sets the cached clock, if any. Its values never decrease:
// clock.System is monotonic.
func (i *Invoker) tick() {
	if i.clock != nil {
		i.clock.Update(clock.System.Nanos())
	}
}

// IsRunning reports whether Invoke calls DoWork: after a successful Start
// and until the agent terminates or Close is called.
func (i *Invoker) IsRunning() bool { return i.running }

// Start binds a context (if the agent is ContextAware) and calls OnStart.
// Only the first call does anything; later calls return nil. If OnStart
// fails the invoker closes the agent (OnClose runs) and returns the OnStart
// error joined with any OnClose error; the handler is also called with it.
// Starting a closed invoker returns ErrClosed.
func (i *Invoker) Start() error {
	if i.closed {
		return ErrClosed
	}
	if i.started {
		return nil
	}
	i.started = true
	if ca, ok := i.agent.(ContextAware); ok {
		var ctx context.Context
		ctx, i.cancel = context.WithCancel(context.Background())
		ca.BindContext(ctx)
	}
	i.tick()
	if err := i.agent.OnStart(); err != nil {
		err = fmt.Errorf("agent %s: OnStart: %w", i.agent.RoleName(), err)
		i.report(err)
		if cerr := i.Close(); cerr != nil {
			err = errors.Join(err, cerr)
		}
		return err
	}
	if !i.closed { // OnStart may have called Close
		i.running = true
	}
	return nil
}

// Invoke runs one duty cycle and returns DoWork's work count and error.
// When not running it returns 0, nil without touching the agent.
//
// Errors follow the runner's rules: a termination error stops the agent and
// closes it (OnClose runs before Invoke returns); it is reported to the
// handler unless expected. Any other error is counted, reported, and the
// agent keeps running.
func (i *Invoker) Invoke() (int, error) {
	if !i.running {
		return 0, nil
	}
	i.tick()
	n, err := i.agent.DoWork()
	if err != nil {
		i.handle(err)
	}
	return n, err
}

func (i *Invoker) handle(err error) {
	if term, expected := IsTermination(err); term {
		i.running = false
		if !expected {
			i.report(err)
		}
		if cerr := i.Close(); cerr != nil {
			i.report(cerr)
		}
		return
	}
	i.report(err)
}

func (i *Invoker) report(err error) {
	if i.handler != nil {
		i.handler(err)
	}
}

// Close stops the agent: the first call cancels its context and calls
// OnClose, returning its error; later calls return nil.
func (i *Invoker) Close() error {
	if i.closed {
		return nil
	}
	i.running = false
	i.closed = true
	if i.cancel != nil {
		i.cancel()
	}
	if err := i.agent.OnClose(); err != nil {
		return fmt.Errorf("agent %s: OnClose: %w", i.agent.RoleName(), err)
	}
	return nil
}
