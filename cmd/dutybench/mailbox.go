package main

import (
	"encoding/binary"
	"time"
	"unsafe"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/idle"
	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/message"
	"github.com/dutyrt/duty/ringbuf"
)

// The mailbox variants of W1 and W3: a 64 KiB mailbox drained by a
// mailbox.Actor's DoWork in a busy loop, as a busy-spinning runner would.

func newBenchMailbox(name string) (*mailbox.Mailbox, error) {
	return mailbox.New(mailbox.Config{Name: name, Capacity: ringCapacity})
}

func newMailboxPair() (pings, pongs *mailbox.Mailbox, err error) {
	if pings, err = newBenchMailbox("pings"); err != nil {
		return nil, nil, err
	}
	pongs, err = newBenchMailbox("pongs")
	return pings, pongs, err
}

// typedActor returns an actor draining mb into a message.Router whose one
// route is handle.
func typedActor(role string, mb *mailbox.Mailbox, handle func(*benchMsg) error) (agent.Agent, error) {
	r := message.NewRouter()
	if err := message.Handle(r, benchMsgs, handle); err != nil {
		return nil, err
	}
	return mailbox.NewReceiverActor(role, mb, r)
}

// mailboxWriter is produce's writer into a mailbox: Send inlines its fast
// path here, one call per message, as a ring's Write.
type mailboxWriter struct{ mb *mailbox.Mailbox }

func (w mailboxWriter) Write(typeID int32, p []byte) error { return w.mb.Send(typeID, p) }

// handle is a mailbox handler feeding c: a method value, not a closure
// made by a helper the compiler inlines (see runFunc).
func (c *checker) handle(m *mailbox.Message) mailbox.Action {
	c.check(m.TypeID(), m.Payload())
	return mailbox.Continue
}

// mailboxSides is mailbox (send and drain) and its extras: the producer
// sends through the mailbox or (!send) writes to its ring, the consumer
// drains with the actor or (!drain) reads the ring, as manytoone-write's
// do; newIdle, if not nil, takes each consumer call's count.
func mailboxSides(cfg *runConfig, send, drain bool, newIdle func() idle.Strategy) (time.Duration, error) {
	host, err := newSharedRing()
	if err != nil {
		return 0, err
	}
	mb, err := mailbox.New(mailbox.Config{Name: "w1", Host: host})
	if err != nil {
		return 0, err
	}
	ring, err := ringbuf.NewManyToOne(host.ring)
	if err != nil {
		return 0, err
	}
	c := newChecker(1)
	actor, err := mailbox.NewActor("w1-consumer", mb, c.handle)
	if err != nil {
		return 0, err
	}
	var w writer = ring
	refused := ringbuf.ErrFull
	if send {
		w, refused = mailboxWriter{mb}, mailbox.ErrBackPressured
	}
	var poll poller = readAll(ring, c)
	if drain {
		poll = actor
	}
	var s idle.Strategy
	if newIdle != nil {
		s = newIdle()
	}
	t := newTeam(cfg.place)
	return stream(cfg, t, c, func() error { return pollUntil(t, c, cfg.n, s, poll) },
		func() error { return produce(t, w, cfg.n, 0, cfg.corruptAt, refused, nil) })
}

// mailboxActors is W3's mailbox-actors: the ponger's handler sends every
// ping back (Abort, to retry next cycle, if the pong mailbox is full).
func mailboxActors(cfg *runConfig) (time.Duration, error) {
	pings, pongs, err := newMailboxPair()
	if err != nil {
		return 0, err
	}
	pc, c := newChecker(1), newChecker(1)
	ponger, err := mailbox.NewActor("w3-ponger", pings, func(m *mailbox.Message) mailbox.Action {
		if pongs.Send(m.TypeID(), m.Payload()) != nil {
			return mailbox.Abort
		}
		c.check(m.TypeID(), m.Payload())
		return mailbox.Continue
	})
	if err != nil {
		return 0, err
	}
	pinger, err := mailbox.NewActor("w3-pinger", pongs, pc.handle)
	if err != nil {
		return 0, err
	}
	t := newTeam(cfg.place)
	return roundTrips(cfg, t, pc, c, func(p []byte) error {
		if err := produceOne(t, mailboxWriter{pings}, p, mailbox.ErrBackPressured, nil); err != nil {
			return err
		}
		return pollUntil(t, pc, pc.received+1, nil, pinger)
	}, func() error { return pollUntil(t, c, cfg.n, nil, ponger) })
}

// benchMsg is the standard payload as a fixed-layout struct.
type benchMsg struct {
	Seq      uint64
	Producer uint64
	_        [16]byte
}

var benchMsgs = message.MustFixed[benchMsg](msgTypeID)

// typedWriter sends the payload's sequence number as a benchMsg.
type typedWriter struct {
	mb *mailbox.Mailbox
	m  *benchMsg
}

func (w typedWriter) Write(_ int32, p []byte) error {
	w.m.Seq = binary.LittleEndian.Uint64(p)
	return benchMsgs.Send(w.mb, w.m)
}

// mailboxTyped is mailbox-typed: mailbox through the message package.
func mailboxTyped(cfg *runConfig) (time.Duration, error) {
	mb, err := newBenchMailbox("w1")
	if err != nil {
		return 0, err
	}
	c := newChecker(1)
	// checkMsg's work in line, as check's is elsewhere: it does not inline.
	actor, err := typedActor("w1-consumer", mb, func(m *benchMsg) error {
		c.received++
		if m.Producer != 0 || m.Seq != c.expected[0] {
			c.wrongSequence(m.Seq, m.Producer)
			return nil
		}
		c.expected[0]++
		return nil
	})
	if err != nil {
		return 0, err
	}
	t := newTeam(cfg.place)
	return stream(cfg, t, c, func() error { return pollUntil(t, c, cfg.n, nil, actor) },
		func() error { return produceTyped(t, mb, cfg.n, cfg.corruptAt) })
}

// produceTyped is produce for typed messages: it fills a benchMsg's
// sequence number and sends it with (*message.Fixed).Send, as typed
// application code does, spinning while the mailbox is back-pressured.
// (produce's writer would decode a raw payload into the message first:
// work a typed producer does not do.)
func produceTyped(t *team, mb *mailbox.Mailbox, n, corruptAt int) error {
	m := new(benchMsg)
	for i := range n {
		m.Seq = seqFor(i, corruptAt)
		for err := benchMsgs.Send(mb, m); err != nil; err = benchMsgs.Send(mb, m) {
			if err := t.refused(err, mailbox.ErrBackPressured, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// sharedRing is a mailbox.Host over a heap ring that the benchmark also
// views as a ringbuf, so one side of the mailbox can be the ring's.
type sharedRing struct{ ring, words []byte }

func newSharedRing() (*sharedRing, error) {
	ring, err := ringbuf.Allocate(ringCapacity)
	if err != nil {
		return nil, err
	}
	words := make([]int64, mailbox.WordsLength/8) // zeroed, 8-byte aligned
	return &sharedRing{ring: ring, words: unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), mailbox.WordsLength)}, nil
}

func (h *sharedRing) Attach(*mailbox.Mailbox, func()) (mailbox.Placement, error) {
	return mailbox.Placement{Ring: h.ring, Words: h.words}, nil
}
func (h *sharedRing) CheckConsumer() error   { return nil }
func (h *sharedRing) Beat(int64, bool) error { return nil }
