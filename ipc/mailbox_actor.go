package ipc

import (
	"errors"
	"fmt"
	"math"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/mailbox"
)

// MailboxActor is mailbox.Actor for a mailbox in a shared file: the agent
// that drains an owner's Mailbox from its duty cycle. Besides what
// mailbox.Actor does (drain up to a limit per cycle, the liveness check,
// the close mode), it keeps the owner's side of the file alive as the
// owner's Drain does: every HeartbeatCycles duty cycles the consumer
// heartbeat, the mirrored counters and, a few times per timeout, the
// file's owner heartbeat (whose fstat also catches a truncated file: the
// cycle returns that error without draining).
//
// OnClose closes the mailbox (sends get mailbox.ErrClosed from then on)
// and delivers or discards what is queued, but does not close the
// Mailbox: Close unmaps the file, and a goroutine of this process still
// sending would then fault instead of getting ErrClosed. Close the
// Mailbox once the actor closed and the process's own senders stopped
// (the runner's Close returns after OnClose).
//
// A mailbox.Actor built over Mailbox.Mailbox() does none of the file's
// part: after the liveness timeout dutystat reports such an owner hung and
// Cleanup treats its file as possibly alive. Use MailboxActor instead.
type MailboxActor struct {
	*mailbox.Actor
	m *Mailbox
}

var _ agent.Agent = (*MailboxActor)(nil)

// NewMailboxActor returns an actor named role that drains m (which this
// process must own: ErrNotOwner otherwise) into h. The options are
// mailbox.Actor's; the consumer heartbeat follows the Mailbox's
// MailboxConfig (its clock and HeartbeatCycles) unless an option sets
// mailbox.WithHeartbeat. Run it on one goroutine (a runner.Runner, an
// agent.Invoker or a composite): it becomes the mailbox's draining
// goroutine, and nothing else may call m.Drain or m.Heartbeat.
func NewMailboxActor(role string, m *Mailbox, h mailbox.Handler, opts ...mailbox.ActorOption) (*MailboxActor, error) {
	if m == nil {
		return nil, fmt.Errorf("%w: nil mailbox", mailbox.ErrConfig)
	}
	if !m.owner {
		return nil, fmt.Errorf("%w: %s: only the mailbox's creator drains it", ErrNotOwner, m.Path())
	}
	// The ring's consumer heartbeat is refreshed by m.tick; the actor's
	// own refresh is pushed out of reach (an option given by the caller
	// comes later and wins).
	all := append([]mailbox.ActorOption{mailbox.WithHeartbeat(m.epochMs, math.MaxInt)}, opts...)
	a, err := mailbox.NewActor(role, m.mb, h, all...)
	if err != nil {
		return nil, err
	}
	return &MailboxActor{Actor: a, m: m}, nil
}

// Owner returns the shared-file Mailbox the actor drains.
func (a *MailboxActor) Owner() *Mailbox { return a.m }

// OnStart records the first consumer heartbeat, in the ring and in the
// file.
func (a *MailboxActor) OnStart() error {
	if err := a.Actor.OnStart(); err != nil {
		return err
	}
	return a.m.tick(true)
}

// DoWork runs the heartbeat every HeartbeatCycles cycles, then
// mailbox.Actor's DoWork. A file heartbeat error (a truncated file, say)
// is returned without draining.
func (a *MailboxActor) DoWork() (int, error) {
	m := a.m
	if m.closed.Load() {
		// The Mailbox was closed under the actor: nothing left to drain,
		// and every later cycle would fail the same way.
		return 0, agent.Terminate(fmt.Errorf("%w: %s: the Mailbox was closed under actor %s", mailbox.ErrClosed, m.Path(), a.RoleName()))
	}
	if err := m.cycle(); err != nil {
		return 0, err
	}
	return a.Actor.DoWork()
}

// OnClose is mailbox.Actor's OnClose (close with the actor's close mode,
// then deliver or discard what is queued; messages left are reported with
// mailbox.ErrNotDrained), followed by a last heartbeat so that the
// counters file holds the final statistics. It leaves the Mailbox open:
// see MailboxActor.
func (a *MailboxActor) OnClose() error {
	if a.m.closed.Load() { // the Mailbox's Close did what OnClose would
		return nil
	}
	return errors.Join(a.Actor.OnClose(), a.m.tick(true))
}
