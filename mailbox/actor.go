package mailbox

import (
	"errors"
	"fmt"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/internal/pad"
)

// defaultDrainLimit is the most messages an actor (NewActor) delivers per
// duty cycle, unless WithDrainLimit says otherwise.
const defaultDrainLimit = 256

// actor is the agent NewActor and NewReceiverActor return.
type actor struct {
	// DoWork writes the mailbox's consumer state on every call: the
	// padding keeps two actors run by two threads (allocated side by side)
	// off each other's lines.
	_         pad.Pair
	role      string
	mb        *Mailbox
	h         Handler
	recv      Receiver // for an actor of a Receiver (h is then nil)
	limit     int
	mode      CloseMode
	stay      bool // !WithEndOfStream: keep running once closed and drained
	discarded int
	_         pad.Pair
}

var _ agent.Agent = (*actor)(nil)

// ActorOption configures an actor (NewActor).
type ActorOption func(*actor)

// WithDrainLimit sets the most messages delivered per duty cycle (default
// 256), so that one busy actor in a composite cannot starve
// the others.
func WithDrainLimit(n int) ActorOption { return func(a *actor) { a.limit = n } }

// WithEndOfStream sets whether the actor ends (DoWork returns
// agent.ErrDone) once its mailbox is closed and every message sent before
// has been consumed: on by default. No message can arrive after that (see
// Mailbox.Close). Off, the actor keeps polling the closed, empty mailbox
// until its runner closes it.
func WithEndOfStream(on bool) ActorOption { return func(a *actor) { a.stay = !on } }

// WithCloseMode sets what OnClose does with what is queued (default Drain:
// deliver it to the handler).
func WithCloseMode(mode CloseMode) ActorOption { return func(a *actor) { a.mode = mode } }

// NewActor returns an agent named role that owns mb and drains it into h:
// each duty
// cycle drains up to a limit of messages into the handler, runs the
// mailbox's liveness check, and every Config.HeartbeatCycles cycles the
// consumer heartbeat (and, for a mailbox in a shared file, its Host's:
// the file's owner heartbeat). OnClose closes the mailbox with the actor's
// close mode. Run it with a runner.Runner, an agent.Invoker or inside a
// composite; like any agent it is driven from one goroutine, which
// becomes the mailbox's draining goroutine. It works the same whether the
// mailbox is on the heap or in a shared file.
//
// A view of a mailbox that only sends (its consumer is another process) is
// refused with ErrNotConsumer.
func NewActor(role string, mb *Mailbox, h Handler, opts ...ActorOption) (agent.Agent, error) {
	if h == nil {
		return nil, errNilHandler
	}
	a, err := newActor(role, mb, h, nil, opts)
	if err != nil {
		return nil, err
	}
	return a, nil
}

// NewReceiverActor is NewActor with a Receiver: the agent drains mb into r
// (see DrainTo). The errors r reports reach the runner as DoWork's error
// (its error handler counts or logs them) and do not stop the agent.
func NewReceiverActor(role string, mb *Mailbox, r Receiver, opts ...ActorOption) (agent.Agent, error) {
	if r == nil {
		return nil, errNilHandler
	}
	a, err := newActor(role, mb, nil, r, opts)
	if err != nil {
		return nil, err
	}
	return a, nil
}

func newActor(role string, mb *Mailbox, h Handler, r Receiver, opts []ActorOption) (*actor, error) {
	if mb == nil {
		return nil, fmt.Errorf("%w: nil mailbox", ErrArgument)
	}
	if mb.sendOnly {
		return nil, errNotConsumer(mb, "NewActor")
	}
	a := &actor{role: role, mb: mb, h: h, recv: r, limit: defaultDrainLimit, mode: Drain}
	for _, o := range opts {
		o(a)
	}
	switch {
	case a.limit < 1:
		return nil, fmt.Errorf("%w: drain limit %d < 1", ErrArgument, a.limit)
	case a.mode != Drain && a.mode != Discard:
		return nil, fmt.Errorf("%w: close mode %d", ErrArgument, int(a.mode))
	}
	return a, nil
}

// RoleName returns the actor's role.
func (a *actor) RoleName() string { return a.role }

// Mailbox returns the mailbox the actor drains: what an idle strategy that
// sleeps until a message arrives (NewWakeIdle, dutyfx's "wake") waits on.
func (a *actor) Mailbox() *Mailbox { return a.mb }

// OnStart records the first consumer heartbeat (Mailbox.Heartbeat).
func (a *actor) OnStart() error { return a.mb.Heartbeat() }

// DoWork drains up to the drain limit and returns the number of messages
// consumed. Errors are Drain's (corrupt frames are reported once per cycle
// in which they were dropped; the actor keeps running), but for a mailbox
// whose memory its Host took away, which ends the actor
// (agent.Terminate wrapping ErrClosed). An idle cycle is decided in line,
// without calling Drain, except on the cycles where the liveness check or
// the heartbeat runs (docs/mailbox.md, "Liveness").
func (a *actor) DoWork() (int, error) {
	m := a.mb
	if err := m.countCycle(); err != nil {
		return 0, a.failed(err)
	}
	if m.idlePoll() {
		return 0, nil
	}
	n, err := m.drainInto(a.h, a.recv, a.limit)
	if err != nil {
		return n, a.failed(err)
	}
	if n == 0 && !a.stay && m.ended() {
		return 0, agent.ErrDone
	}
	return n, nil
}

// failed ends the actor when its mailbox was detached: every later cycle
// would fail the same way.
func (a *actor) failed(err error) error {
	if err == ErrClosed && a.mb.detached() {
		return agent.Terminate(fmt.Errorf("%w: %s: the mailbox's memory was released under actor %s", ErrClosed, a.mb.Name(), a.role))
	}
	return err
}

// OnClose closes the mailbox with the actor's close mode. With Drain it
// then delivers what is queued to the handler until the mailbox is empty,
// and returns an error wrapping ErrNotDrained if messages are left (the
// handler aborted, or a claim is still open); with Discard it discards what
// is queued (counted; Discarded reports how many) and returns an error
// wrapping ErrNotDrained if a claim still open at the head stopped it.
// Last, a heartbeat, so that a Host publishes the final statistics. A
// mailbox already detached by its Host is left alone.
func (a *actor) OnClose() error {
	m := a.mb
	if m.detached() {
		return nil
	}
	if a.mode == Discard {
		n, err := m.Close(Discard)
		a.discarded = n
		if err != nil {
			return err
		}
		// A claim still open at the head stops the discard: what waits
		// behind it is neither delivered nor counted, so say so, as in
		// Drain mode (TestActorDiscardCloseReportsWhatIsLeft).
		return errors.Join(a.left(), m.beat(true))
	}
	if _, err := m.Close(Drain); err != nil {
		return err
	}
	var errs error
	for {
		n, err := m.drainQueued(a.h, a.recv)
		if err != nil && errs == nil {
			errs = err
		}
		if n == 0 {
			break
		}
	}
	// Both: what was left, and why a drain failed (a corrupt frame).
	return errors.Join(a.left(), errs, m.beat(true))
}

// left reports the bytes still queued after OnClose, as ErrNotDrained.
func (a *actor) left() error {
	if left := a.mb.size(); left > 0 {
		return fmt.Errorf("%w: %s: %d bytes queued", ErrNotDrained, a.role, left)
	}
	return nil
}
