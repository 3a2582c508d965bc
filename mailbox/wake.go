package mailbox

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/dutyrt/duty/idle"
	"github.com/dutyrt/duty/internal/doorbell"
	"github.com/dutyrt/duty/internal/futex"
)

// WakeConfig configures NewWakeIdle. The zero value is the defaults.
type WakeConfig struct {
	// Spins is how many idle duty cycles spin (one pause each) after the
	// last work before the agent sleeps: a message arriving then is seen
	// within a poll, as with busy spinning. Default 1000.
	Spins int
	// MaxSleep bounds one sleep: the agent's duty cycle runs at least this
	// often while nothing arrives (for its timers, and the consumer
	// heartbeat, which it stores before each sleep). Default 100 ms.
	MaxSleep time.Duration
	// Deadline, if set, is asked before each sleep for the agent's next
	// deadline (a timer, the next tick a feed publishes); the sleep ends
	// by it. A zero time means none.
	Deadline func() time.Time
}

// NewWakeIdle returns an idle strategy for the agent that drains mbs: it
// spins for cfg.Spins idle cycles after the last work, then sleeps until a
// sender publishes into one of the mailboxes, or cfg.MaxSleep passes. The
// sleep is a futex on a word in each mailbox's shared memory (its
// doorbell), so senders in other processes wake the agent as well as
// senders in this one; an idle agent uses no CPU. Every send loads the
// doorbell after it published (the state word's cache line, which it
// loaded already), and makes a system call only when the consumer sleeps.
// Linux sleeps on all the mailboxes at once (futex_waitv); elsewhere the
// strategy polls in short sleeps.
//
// No wake-up is lost: a consumer about to sleep sets each doorbell, then
// loads each ring's tail, and sleeps only if every ring is empty; a sender
// claims its space with a compare-and-swap of the tail, and loads the
// doorbell after it. All four are sequentially consistent (sync/atomic),
// so either the consumer's load sees the claim, and it does not sleep, or
// the sender's load sees the doorbell, and it wakes the consumer (on any
// architecture, not only under x86's ordering). A ring that is not empty
// but has nothing to read (a claim being filled) is never slept on: the
// strategy pauses briefly and looks again, as it does while a mailbox is
// closed (Close rings the doorbell, so a sleeping agent sees its end of
// stream at once).
//
// An agent with no mailbox but a Deadline (a feed that publishes on a
// clock) sleeps until the deadline. Use it from the consumer's goroutine
// (a runner's), one per agent, like any idle strategy. Views that only send (ipc.OpenMailbox) are refused
// (ErrNotConsumer).
func NewWakeIdle(cfg WakeConfig, mbs ...*Mailbox) (idle.Strategy, error) {
	if cfg.Spins < 0 || cfg.MaxSleep < 0 || len(mbs) == 0 && cfg.Deadline == nil {
		return nil, fmt.Errorf("%w: WakeIdle needs mailboxes or a Deadline, Spins %d and MaxSleep %v not negative", ErrArgument, cfg.Spins, cfg.MaxSleep)
	}
	if cfg.Spins == 0 {
		cfg.Spins = defaultWakeSpins
	}
	if cfg.MaxSleep == 0 {
		cfg.MaxSleep = defaultWakeMaxSleep
	}
	rings := make([]doorbell.Ring, len(mbs))
	for i, mb := range mbs {
		if mb == nil {
			return nil, fmt.Errorf("%w: nil mailbox", ErrArgument)
		}
		if mb.sendOnly {
			return nil, errNotConsumer(mb, "NewWakeIdle")
		}
		rings[i] = wakeRing{mb}
	}
	return doorbell.New(doorbell.Config(cfg), rings, idle.BusySpin()), nil
}

const (
	defaultWakeSpins    = 1000
	defaultWakeMaxSleep = 100 * time.Millisecond
)

// wakeRing is a consumer's mailbox as the wake strategy sleeps on it.
type wakeRing struct{ m *Mailbox }

func (r wakeRing) Doorbell() *atomic.Uint32 { return &r.m.w.doorbell }

// Beat heartbeats as a drain does: when the millisecond moved.
func (r wakeRing) Beat() { _ = r.m.beat(false) }

// Quiet: a closed mailbox is not slept on either: its end of stream is
// the agent's to see (an Actor checks it on its liveness-check cycles).
func (r wakeRing) Quiet() bool {
	m := r.m
	return m.trailer.Tail.Load() == m.trailer.Head.Load() && m.w.state.Load() == stateOpen
}

func (r wakeRing) Wake() { r.m.wake() }

// rang is the sender's side of the doorbell: after a send published, it
// loads the doorbell (its claim's compare-and-swap of the tail is ordered
// before the load: see NewWakeIdle) and wakes a consumer that sleeps on
// it. Small enough to inline into the send paths.
func (m *Mailbox) rang() {
	if m.w.doorbell.Load() != 0 {
		m.wake()
	}
}

// wake wakes the consumer sleeping on the doorbell: one sender clears it
// and makes the system call; the others see it clear.
//
//go:noinline
func (m *Mailbox) wake() {
	if m.w.doorbell.CompareAndSwap(1, 0) {
		futex.Wake(&m.w.doorbell, 1)
	}
}
