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

// The mailbox variants (W1's mailbox and mailbox-typed, W3's
// mailbox-actors, and their extras): the same workloads through the actor
// layer, a mailbox.Mailbox over a 64 KiB many-to-one ring drained by a
// mailbox.Actor's DoWork in a busy loop, as a runner with a busy-spin idle
// strategy would run it.

func newBenchMailbox(name string) (*mailbox.Mailbox, error) {
	return mailbox.New(mailbox.Config{Name: name, Capacity: ringCapacity})
}

// newMailboxPair returns the two mailboxes of a ping-pong.
func newMailboxPair() (pings, pongs *mailbox.Mailbox, err error) {
	if pings, err = newBenchMailbox("pings"); err != nil {
		return nil, nil, err
	}
	pongs, err = newBenchMailbox("pongs")
	return pings, pongs, err
}

// typedActor returns an actor draining mb into a message.Router whose one
// route, for benchMsg, is handle.
func typedActor(role string, mb *mailbox.Mailbox, handle func(*benchMsg) error) (agent.Agent, error) {
	r := message.NewRouter()
	if err := message.Handle(r, benchMsgs, handle); err != nil {
		return nil, err
	}
	return mailbox.NewReceiverActor(role, mb, r)
}

// mailboxWriter sends through a mailbox: produce's writer. Send inlines
// its fast path here, so the producer makes one call per message, as into
// a ring's Write.
type mailboxWriter struct{ mb *mailbox.Mailbox }

func (w mailboxWriter) Write(typeID int32, p []byte) error { return w.mb.Send(typeID, p) }

// handle is a mailbox handler feeding c. It is a method, passed as the
// method value c.handle, not a closure returned by a helper: a closure
// made in a function the compiler inlines is compiled without inlining
// the calls in its own body (golang/go#81380), which would put two calls
// (Message.TypeID, Message.Payload) on every message of the consumer.
func (c *checker) handle(m *mailbox.Message) mailbox.Action {
	c.check(m.TypeID(), m.Payload())
	return mailbox.Continue
}

// mailboxSides is mailbox (send and drain) and its extras: the producer
// sends through the mailbox (send) or writes to its ring as
// manytoone-write does; the consumer drains in the actor's DoWork (drain)
// or reads the ring as manytoone-write's consumer does; newIdle, if not
// nil, takes the count of each of the consumer's calls.
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

// mailboxActors is W3's mailbox-actors: two actors, each owning a mailbox.
// The ponger's handler sends every ping back (Abort, to retry next cycle,
// if the pong mailbox is full); the pinger's handler takes the pong, and
// its loop sends the next ping after each pong.
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

// benchMsg is the standard payload as a fixed-layout struct: the same 32
// bytes (docs/workloads.md, "Common rules").
type benchMsg struct {
	Seq      uint64
	Producer uint64
	_        [16]byte
}

var benchMsgs = message.MustFixed[benchMsg](msgTypeID)

// typedWriter sends the payload's sequence number as a benchMsg with
// (*message.Fixed).Send.
type typedWriter struct {
	mb *mailbox.Mailbox
	m  *benchMsg
}

func (w typedWriter) Write(_ int32, p []byte) error {
	w.m.Seq = binary.LittleEndian.Uint64(p)
	return benchMsgs.Send(w.mb, w.m)
}

// mailboxTyped is mailbox-typed: mailbox through the message package. The
// producer sends a benchMsg with (*message.Fixed).Send, the consumer is an
// actor of a message.Router whose handler takes a *benchMsg.
func mailboxTyped(cfg *runConfig) (time.Duration, error) {
	mb, err := newBenchMailbox("w1")
	if err != nil {
		return 0, err
	}
	c := newChecker(1)
	// checkMsg's work in the handler itself, as check is in the other
	// variants' handlers: checkMsg does not inline.
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

// sharedRing is a mailbox.Host over a heap ring the benchmark also holds a
// ringbuf view of: the mailbox and the bare ring are two views of one
// ring, so one side of the mailbox can be replaced by the ring's.
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
