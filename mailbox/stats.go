package mailbox

import "github.com/dutyrt/duty/internal/mailboxframe"

// Stats is a snapshot of a mailbox's statistics. It is read lock-free from
// any goroutine; the fields are read one by one, so they are not a single
// atomic picture. With a Host they live in shared memory: every process
// sees the same totals (BackPressured and RefusedClosed summed over all
// senders).
type Stats struct {
	Name string
	// Capacity is the ring's capacity in bytes.
	Capacity int
	// Depth is the number of bytes queued now (headers, padding and open
	// claims included): an indication, as the ring's Size.
	Depth int
	// MaxDepth is the largest backlog Drain has seen, in bytes (headers and
	// padding included, at most Capacity): the most one of its ring reads
	// consumed, all of which was queued when that read began, or, for a
	// Drain that stopped at its limit, what it left queued.
	MaxDepth int64
	// BackPressured counts sends that found the mailbox full: each send or
	// claim that returned ErrBackPressured (or ErrConsumerDead), and each
	// SendContext that had to wait.
	BackPressured int64
	// RefusedClosed counts sends refused with ErrClosed.
	RefusedClosed int64
	// Delivered counts messages handed to a handler and consumed (an
	// aborted delivery is not counted until it is consumed). Those of a
	// Drain whose handler panicked, the panicking message included (the
	// ring consumes it), are counted by the next Drain.
	Delivered int64
	// Torn counts claims released by the liveness check: messages whose
	// sender died (or hung) between claim and commit, dropped whole.
	Torn int64
	// Corrupt counts records dropped because their framing is invalid.
	Corrupt int64
	// Discarded counts messages consumed without delivery after
	// Close(Discard).
	Discarded int64
	// Stranded counts the messages queued in a mailbox whose consumer's
	// process is gone (sends refused with ErrConsumerDead since its Host
	// proved it): accepted, never to be delivered. Each sender's messages
	// are thus delivered, refused or stranded. Counted from the ring
	// when Stats is called (a claim still open is not a message yet); 0
	// while the consumer lives.
	Stranded int64
	// Closed reports a mailbox that refuses sends: closed, or its
	// consumer found dead.
	Closed bool
}

// Stats returns a snapshot of the mailbox's statistics. Safe from any
// goroutine.
func (m *Mailbox) Stats() Stats {
	w := m.w
	depth, stranded := m.cons.lastDepth, m.cons.lastStranded
	if !m.gone {
		depth = m.size()
		if w.state.Load() == stateConsumerDead {
			stranded = m.stranded()
		}
	}
	return Stats{
		Name:          m.name,
		Capacity:      m.capacity,
		Depth:         depth,
		MaxDepth:      w.maxDepth.Load(),
		BackPressured: w.backPressured.Load(),
		RefusedClosed: w.refusedClosed.Load(),
		Delivered:     w.delivered.Load(),
		Torn:          w.torn.Load(),
		Corrupt:       w.corrupt.Load(),
		Discarded:     w.discarded.Load(),
		Stranded:      stranded,
		Closed:        w.state.Load() != stateOpen,
	}
}

// stranded counts the messages queued between the consumer's position and
// the tail (mailboxframe.Messages). For a mailbox whose consumer is gone,
// nothing moves the head, so the count stands once the senders have
// stopped.
func (m *Mailbox) stranded() int64 {
	return mailboxframe.Messages(&m.prod.Log, m.trailer.Head.Load(), m.trailer.Tail.Load(), m.lay.Over)
}
