package natsbridge

import (
	"fmt"
	"sync/atomic"

	"github.com/dutyrt/duty/counters"
	"github.com/dutyrt/duty/internal/countertype"
)

// counterTypeID is the type id of the bridge's counters in a counters file:
// countertype.BridgeEvents (the label names the statistic, the bridge and
// its direction: "natsbridge-published: <name> out").
const counterTypeID = countertype.BridgeEvents

// Stats is a snapshot of a bridge's statistics, read lock-free from any
// goroutine; fields are loaded one by one, not as one atomic picture.
type Stats struct {
	Name string
	// Published counts batches accepted: handed to the client in core mode,
	// acknowledged by the stream in JetStream mode (duplicates included).
	Published int64
	// Batched counts messages packed into batches (outbound).
	Batched int64
	// Delivered counts messages sent into the local mailbox (inbound).
	Delivered int64
	// Dropped counts messages lost, never silently: in core mode those of
	// a batch that found the local mailbox full, and on either side a
	// message the other end can never carry (ErrTooLarge outbound,
	// mailbox.ErrTooLong inbound).
	Dropped int64
	// Redelivered counts JetStream batches received again after they were
	// delivered (their acknowledgement was lost): acknowledged, skipped.
	Redelivered int64
	// Reconnects counts the client's reconnects.
	Reconnects int64
	// Rejected counts payloads on the subject that were not valid frames
	// (ErrForeign, ErrMalformed): dropped whole.
	Rejected int64
	// BackPressured counts outbound cycles that found the client's buffer
	// full or a publish refused; inbound, in JetStream mode, the times a
	// batch found the mailbox full and the times the bridge stopped pulling
	// for lack of room (once per episode).
	BackPressured int64
	// Republished counts JetStream batches published again after a failed
	// or unacknowledged publish.
	Republished int64
	// Duplicates counts JetStream batches stored twice (republished after
	// the stream's deduplication window) and recognised by their source's
	// batch sequence: acknowledged, skipped.
	Duplicates int64
	// LostMessages counts messages lost, never silently, that are not in
	// Dropped. Inbound: the messages missing from a source's message
	// sequence, a gap between two batches (a batch lost in a connection, or
	// dropped by the client as a slow consumer) and, in core mode, the
	// messages a source sent before this bridge's first batch from it (sent
	// before it subscribed, or delivered by a predecessor of this bridge).
	// Outbound: messages taken from the source that the bridge could not
	// publish before it closed, or whose publication the server did not
	// confirm (core mode: a flush; JetStream mode: the acknowledgement); the
	// latter may have arrived. In core mode a receiver's Delivered + Dropped
	// + LostMessages reconciles with what its sources batched up to the last
	// batch it saw; the sender's LostMessages covers the tail after it.
	LostMessages int64
	// LostBatches counts the batches in which the inbound side's
	// LostMessages were missing (batch sequence gaps, and in core mode the
	// batches before a source's first one seen).
	LostBatches int64
	// ClientDropped counts frames the inbound side's NATS client dropped as
	// a slow consumer (core mode, Subscription.Dropped). Their messages are
	// in LostMessages once a later batch of the same source shows the gap.
	ClientDropped int64
}

// stat indexes the words of a bridge's statistics.
type stat int

const (
	statPublished stat = iota
	statBatched
	statDelivered
	statDropped
	statRedelivered
	statReconnects
	statRejected
	statBackPressured
	statRepublished
	statLostBatches
	statDuplicates
	statLostMessages
	statClientDropped
	numStats
)

var statNames = [numStats]string{
	"published", "batched", "delivered", "dropped", "redelivered",
	"reconnects", "rejected", "back-pressured", "republished", "lost-batches",
	"duplicates", "lost-messages", "client-dropped",
}

// stats holds the words: the bridge's own, or counters of a counters file.
// Every word is an atomic counter of its own (Add from the duty thread or
// the client's callback goroutine, Load from anyone): they order nothing
// but themselves.
type stats struct {
	name  string
	own   [numStats]atomic.Int64
	w     [numStats]atomic.Pointer[atomic.Int64]
	owned []*counters.Counter
}

func (s *stats) init(name, dir string, m *counters.Manager) error {
	s.name = name
	for i := range s.w {
		s.w[i].Store(&s.own[i])
	}
	if m == nil {
		return nil
	}
	for i := range s.w {
		c, err := m.Allocate(fmt.Sprintf("natsbridge-%s: %s %s", statNames[i], name, dir), counterTypeID, nil)
		if err != nil {
			s.close()
			return fmt.Errorf("natsbridge: %s: counters: %w", name, err)
		}
		s.owned = append(s.owned, c)
		s.w[i].Store(c.Word())
	}
	return nil
}

func (s *stats) add(i stat, n int64) { s.w[i].Load().Add(n) }

func (s *stats) set(i stat, v int64) { s.w[i].Load().Store(v) }

// close frees the counters; Stats keeps the final values.
func (s *stats) close() {
	for i, c := range s.owned {
		s.own[i].Store(c.Get())
		s.w[i].Store(&s.own[i])
		_ = c.Close()
	}
	s.owned = nil
}

func (s *stats) snapshot() Stats {
	g := func(i stat) int64 { return s.w[i].Load().Load() }
	return Stats{
		Name:          s.name,
		Published:     g(statPublished),
		Batched:       g(statBatched),
		Delivered:     g(statDelivered),
		Dropped:       g(statDropped),
		Redelivered:   g(statRedelivered),
		Reconnects:    g(statReconnects),
		Rejected:      g(statRejected),
		BackPressured: g(statBackPressured),
		Republished:   g(statRepublished),
		LostBatches:   g(statLostBatches),
		Duplicates:    g(statDuplicates),
		LostMessages:  g(statLostMessages),
		ClientDropped: g(statClientDropped),
	}
}
