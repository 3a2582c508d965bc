package mailbox

import (
	"errors"
	"fmt"
)

// Receiver is a handler with state, for an agent that drains its mailbox
// into itself: the agent implements Receive, and DrainTo(agent, n) passes
// it as an interface value, which costs no allocation, where
// Drain(agent.handle, n) would allocate a method value on every call.
//
// Receive decides what happens to the message as a Handler does (the
// Message and its slices are valid only during the call) and may report
// that handling it failed. An error does not change the Action: the
// message is consumed unless Receive returns Abort, and the drain goes on
// unless it returns Abort or Break.
type Receiver interface {
	Receive(m *Message) (Action, error)
}

// Dispatcher is a Receiver that hands each type id's messages to a
// Receiver of its own (message.Router is one). The drain asks Route once
// per run of messages of one type id in a drain and calls that Receiver
// directly: one indirect call fewer per message than going through
// Receive. Route must return the same Receiver for a type id while a
// drain runs; a message Route's Receiver gets is one Receive would have
// handed it.
type Dispatcher interface {
	Receiver
	Route(typeID int32) Receiver
}

// handlerError reports that a Receiver failed on messages of one DrainTo
// call: the first error, which errors.Is and errors.As reach, and how many
// messages failed (in the message).
type handlerError struct {
	err    error
	failed int
}

func (e *handlerError) Error() string {
	return fmt.Sprintf("mailbox: handler failed on %d messages, first: %v", e.failed, e.err)
}

func (e *handlerError) Unwrap() error { return e.err }

// DrainTo is Drain with a Receiver: it delivers up to limit messages to
// r.Receive and returns the number consumed. The errors r returns are
// reported after the drain: the only one as it is, several as an error
// that wraps the first and says how many failed ("handler failed on n
// messages"), joined with the drain's own error, if any. Same goroutine rules as Drain.
func (m *Mailbox) DrainTo(r Receiver, limit int) (int, error) {
	if r == nil {
		return 0, errNilHandler
	}
	if m.sendOnly {
		return 0, errNotConsumer(m, "Drain")
	}
	m.cons.failed, m.cons.firstFailure = 0, nil
	return m.cycle(nil, r, limit)
}

// receive calls the Receiver. Small enough to inline into the drain's
// fast path; failures are kept out of line.
func (c *consumer) receive(msg *Message) Action {
	a, err := c.recv.Receive(msg)
	if err != nil {
		c.fail(err)
	}
	return a
}

// fail keeps the first error of a drain and counts the others.
//
//go:noinline
func (c *consumer) fail(err error) {
	if c.failed == 0 {
		c.firstFailure = err
	}
	c.failed++
}

// takeFailures combines a drain's error with what its Receiver reported,
// and forgets the latter.
func (c *consumer) takeFailures(err error) error {
	if c.failed == 0 {
		return err
	}
	herr := c.firstFailure
	if c.failed > 1 {
		herr = &handlerError{err: c.firstFailure, failed: c.failed}
	}
	c.failed, c.firstFailure = 0, nil
	if err != nil {
		return errors.Join(err, herr)
	}
	return herr
}
