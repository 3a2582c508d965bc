package mailbox

import (
	"errors"
	"fmt"
	"time"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/ringbuf"
)

// DefaultDrainLimit is the most messages an Actor delivers per duty cycle.
const DefaultDrainLimit = 256

// DefaultHeartbeatCycles is how many duty cycles an Actor lets pass between
// two updates of the consumer heartbeat.
const DefaultHeartbeatCycles = 256

// Actor is an agent.Agent that owns a mailbox and a handler: each duty
// cycle drains up to a limit of messages into the handler, runs the
// mailbox's liveness check, and now and then records the consumer
// heartbeat in the ring (epoch milliseconds, for senders in other
// processes). OnClose closes the mailbox with the actor's close mode. Run
// it with a runner.Runner, an agent.Invoker or inside a composite; like any
// agent it is driven from one goroutine, which becomes the mailbox's
// draining goroutine.
type Actor struct {
	// DoWork writes cycles on every call: the padding keeps two actors
	// run by two threads (allocated side by side) off each other's lines.
	_         [128]byte
	role      string
	mb        *Mailbox
	h         Handler
	limit     int
	mode      CloseMode
	hbCycles  int
	epochMs   func() int64
	cycles    int
	discarded int
	_         [128]byte
}

var _ agent.Agent = (*Actor)(nil)

// ActorOption configures an Actor.
type ActorOption func(*Actor)

// WithDrainLimit sets the most messages delivered per duty cycle (default
// DefaultDrainLimit), so that one busy actor in a composite cannot starve
// the others.
func WithDrainLimit(n int) ActorOption { return func(a *Actor) { a.limit = n } }

// WithCloseMode sets what OnClose does with what is queued (default Drain:
// deliver it to the handler).
func WithCloseMode(mode CloseMode) ActorOption { return func(a *Actor) { a.mode = mode } }

// WithHeartbeat sets the epoch clock (milliseconds) of the consumer
// heartbeat and the number of duty cycles between two updates (default
// time.Now().UnixMilli every DefaultHeartbeatCycles cycles).
func WithHeartbeat(epochMillis func() int64, cycles int) ActorOption {
	return func(a *Actor) { a.epochMs, a.hbCycles = epochMillis, cycles }
}

// NewActor returns an actor named role that drains mb into h.
func NewActor(role string, mb *Mailbox, h Handler, opts ...ActorOption) (*Actor, error) {
	if mb == nil {
		return nil, fmt.Errorf("%w: nil mailbox", ErrConfig)
	}
	if h == nil {
		return nil, ErrNilHandler
	}
	a := &Actor{role: role, mb: mb, h: h, limit: DefaultDrainLimit, mode: Drain,
		hbCycles: DefaultHeartbeatCycles, epochMs: func() int64 { return time.Now().UnixMilli() }}
	for _, o := range opts {
		o(a)
	}
	switch {
	case a.limit < 1:
		return nil, fmt.Errorf("%w: drain limit %d < 1", ErrConfig, a.limit)
	case a.mode != Drain && a.mode != Discard:
		return nil, fmt.Errorf("%w: close mode %d", ErrConfig, int(a.mode))
	case a.hbCycles < 1 || a.epochMs == nil:
		return nil, fmt.Errorf("%w: heartbeat every %d cycles, clock set: %t", ErrConfig, a.hbCycles, a.epochMs != nil)
	}
	return a, nil
}

// Mailbox returns the actor's mailbox.
func (a *Actor) Mailbox() *Mailbox { return a.mb }

// RoleName returns the actor's role.
func (a *Actor) RoleName() string { return a.role }

// OnStart records the first heartbeat.
func (a *Actor) OnStart() error {
	a.mb.ring.SetConsumerHeartbeatTime(a.epochMs())
	return nil
}

// DoWork drains up to the drain limit and returns the number of messages
// consumed. Errors are Drain's (corrupt frames are reported once per cycle
// in which they were dropped; the actor keeps running). An idle cycle is
// decided in line, without calling Drain, except on the cycles where the
// liveness check runs (docs/mailbox.md, "Liveness").
func (a *Actor) DoWork() (int, error) {
	a.cycles++
	if a.cycles >= a.hbCycles {
		a.cycles = 0
		a.mb.ring.SetConsumerHeartbeatTime(a.epochMs())
	}
	if a.mb.quietPoll() {
		return 0, nil
	}
	return a.mb.Drain(a.h, a.limit)
}

// OnClose closes the mailbox with the actor's close mode. With Drain it
// then delivers what is queued to the handler until the mailbox is empty,
// and returns an error wrapping ErrNotDrained if messages are left (the
// handler aborted, or a claim is still open); with Discard it discards what
// is queued (counted; Discarded reports how many) and returns an error
// wrapping ErrNotDrained if a claim still open at the head stopped it.
func (a *Actor) OnClose() error {
	if a.mode == Discard {
		n, err := a.mb.Close(Discard)
		a.discarded = n
		if err != nil {
			return err
		}
		// A claim still open at the head stops the discard: what waits
		// behind it is neither delivered nor counted, so say so, as in
		// Drain mode (TestActorDiscardCloseReportsWhatIsLeft).
		return a.left()
	}
	if _, err := a.mb.Close(Drain); err != nil {
		return err
	}
	var errs error
	for {
		n, err := a.mb.Drain(a.h, ringbuf.NoLimit)
		if err != nil && errs == nil {
			errs = err
		}
		if n == 0 {
			break
		}
	}
	// Both: what was left, and why a drain failed (a corrupt frame).
	return errors.Join(a.left(), errs)
}

// left reports the bytes still queued after OnClose, as ErrNotDrained.
func (a *Actor) left() error {
	if left := a.mb.ring.Size(); left > 0 {
		return fmt.Errorf("%w: %s: %d bytes queued", ErrNotDrained, a.role, left)
	}
	return nil
}

// Discarded returns the number of messages OnClose discarded (Discard
// mode).
func (a *Actor) Discarded() int { return a.discarded }
