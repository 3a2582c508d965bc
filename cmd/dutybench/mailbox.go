package main

import (
	"time"
	"unsafe"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/message"
	"github.com/dutyrt/duty/ringbuf"
)

// The mailbox variants (the standard variants mailbox in w1 and
// mailbox-actors in w3): the same workloads through the actor layer, a
// mailbox.Mailbox over a 64 KiB many-to-one ring drained by a
// mailbox.NewActor's DoWork, beside the bare rings of the same run.
func init() {
	w1.variants = append(w1.variants,
		variant{name: "mailbox", run: w1Mailbox},
		variant{name: "mailbox-typed", run: w1MailboxTyped},
		// Which side of the layer costs (docs/mailbox.md, "In cmd/dutybench"):
		// each is the mailbox variant with one side replaced by the bare
		// ring's, on the same mailbox's ring.
		variant{name: "mailbox-send-read", extra: true, run: func(cfg *runConfig) (time.Duration, error) { return w1MailboxSides(cfg, true, false) }},
		variant{name: "mailbox-write-drain", extra: true, run: func(cfg *runConfig) (time.Duration, error) { return w1MailboxSides(cfg, false, true) }},
	)
	w3.variants = append(w3.variants, variant{name: "mailbox-actors", run: w3MailboxActors})
}

func newBenchMailbox(name string) (*mailbox.Mailbox, error) {
	return mailbox.New(mailbox.Config{Name: name, Capacity: ringCapacity})
}

// sendSpinMailbox sends p, spinning while the mailbox is full (W3, where
// one message is in flight).
func sendSpinMailbox(t *team, mb *mailbox.Mailbox, p []byte) error {
	for {
		err := mb.Send(msgTypeID, p)
		if err != mailbox.ErrBackPressured {
			return err
		}
		if t.abort.Load() {
			return errAborted
		}
	}
}

// produceSends is produceWrites through the mailbox: n messages with
// Send, retrying at once while back-pressured. The call is in the loop
// itself, as Write is in produceWrites: a helper around Send (one the
// compiler does not inline, as sendSpinMailbox) would put a call frame of
// the harness's between the producer and the ring in this variant only.
func produceSends(t *team, mb *mailbox.Mailbox, n int, id uint64, corruptAt int) error {
	var p [payloadLen]byte
	putPayload(p[:], 0, id)
	for i := range n {
		putSeq(&p, seqFor(i, corruptAt))
		for {
			err := mb.Send(msgTypeID, p[:])
			if err == nil {
				break
			}
			if err != mailbox.ErrBackPressured {
				return err
			}
			if t.abort.Load() {
				return errAborted
			}
		}
	}
	return nil
}

// w1Mailbox: the producer sends with Mailbox.Send; the consumer is an
// Actor whose DoWork (drain with the default limit, liveness check,
// heartbeat) runs in a busy loop, as a runner with a busy-spin idle
// strategy would run it.
func w1Mailbox(cfg *runConfig) (time.Duration, error) { return w1MailboxSides(cfg, true, true) }

// w1MailboxSides is w1Mailbox with the producer sending through the
// mailbox (send) or writing to its ring with Write as manytoone-write does,
// and the consumer draining in the actor's DoWork (drain) or reading the
// ring with Read as manytoone-write's consumer does.
func w1MailboxSides(cfg *runConfig, send, drain bool) (time.Duration, error) {
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
	actor, err := mailbox.NewActor("w1-consumer", mb, func(m *mailbox.Message) mailbox.Action {
		c.check(m.TypeID(), m.Payload())
		return mailbox.Continue
	})
	if err != nil {
		return 0, err
	}
	t := newTeam(cfg.place)
	n, corruptAt := cfg.n, cfg.corruptAt
	t.spawn(0, func() error {
		if !send {
			return produceWrites(t, ring, n, 0, corruptAt)
		}
		return produceSends(t, mb, n, 0, corruptAt)
	})
	t.spawn(1, func() error {
		if !drain {
			if err := consumeRing(t, ring.Read, c, n); err != nil {
				return err
			}
			return c.finish([]int{n})
		}
		return runActor(t, actor, c, n)
	})
	return t.run(cfg.timeout)
}

// runActor calls the consumer actor's DoWork in a busy loop, as a runner
// with a busy-spin idle strategy would, until c has received n messages.
func runActor(t *team, actor agent.Agent, c *checker, n int) error {
	for c.received < n {
		k, err := actor.DoWork()
		if err != nil {
			return err
		}
		if k == 0 && t.abort.Load() {
			return errAborted
		}
	}
	t.finish()
	return c.finish([]int{n})
}

// w3MailboxActors: two actors, each owning a mailbox. The ponger's handler
// sends every ping back (Abort, to retry next cycle, if the pong mailbox is
// full); the pinger's handler takes the pong, and its loop sends the next
// ping after each pong, timing the round trip.
func w3MailboxActors(cfg *runConfig) (time.Duration, error) {
	pings, err := newBenchMailbox("pings")
	if err != nil {
		return 0, err
	}
	pongs, err := newBenchMailbox("pongs")
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
	pinger, err := mailbox.NewActor("w3-pinger", pongs, func(m *mailbox.Message) mailbox.Action {
		pc.check(m.TypeID(), m.Payload())
		return mailbox.Continue
	})
	if err != nil {
		return 0, err
	}
	t := newTeam(cfg.place)
	n, corruptAt, lat := cfg.n, cfg.corruptAt, cfg.lat[:cfg.n]
	t.spawn(0, func() error {
		var p [payloadLen]byte
		putPayload(p[:], 0, 0)
		clk := newClock()
		last := clk.now()
		for i := range n {
			putSeq(&p, seqFor(i, corruptAt))
			if err := sendSpinMailbox(t, pings, p[:]); err != nil {
				return err
			}
			for pc.received == i {
				k, err := pinger.DoWork()
				if err != nil {
					return err
				}
				if k == 0 && t.abort.Load() {
					return errAborted
				}
			}
			now := clk.now()
			lat[i] = now - last
			last = now
		}
		t.finish()
		return pc.finish([]int{n})
	})
	t.spawn(1, func() error {
		for c.received < n {
			k, err := ponger.DoWork()
			if err != nil {
				return err
			}
			if k == 0 && t.abort.Load() {
				return errAborted
			}
		}
		return c.finish([]int{n})
	})
	return t.run(cfg.timeout)
}

// benchMsg is the standard payload as a fixed-layout struct: the same 32
// bytes (docs/workloads.md, "Common rules").
type benchMsg struct {
	Seq      uint64
	Producer uint64
	_        [16]byte
}

var benchMsgs = message.MustFixed[benchMsg](msgTypeID)

// w1MailboxTyped is w1Mailbox through the message package: the producer
// sends a benchMsg with (*message.Fixed).Send, the consumer is an actor of
// a message.Router whose handler takes a *benchMsg.
func w1MailboxTyped(cfg *runConfig) (time.Duration, error) {
	mb, err := newBenchMailbox("w1")
	if err != nil {
		return 0, err
	}
	c := newChecker(1)
	r := message.NewRouter()
	// The checker's check, on the fields (one producer, id 0), in the
	// handler itself as check is in the other variants' handlers.
	if err := message.Handle(r, benchMsgs, func(m *benchMsg) error {
		c.received++
		if m.Producer != 0 || m.Seq != c.expected[0] {
			c.wrongSequence(m.Seq, m.Producer)
			return nil
		}
		c.expected[0]++
		return nil
	}); err != nil {
		return 0, err
	}
	actor, err := mailbox.NewReceiverActor("w1-consumer", mb, r)
	if err != nil {
		return 0, err
	}
	t := newTeam(cfg.place)
	n, corruptAt := cfg.n, cfg.corruptAt
	t.spawn(0, func() error {
		var m benchMsg
		for i := range n {
			m.Seq = seqFor(i, corruptAt)
			for {
				err := benchMsgs.Send(mb, &m)
				if err == nil {
					break
				}
				if err != mailbox.ErrBackPressured {
					return err
				}
				if t.abort.Load() {
					return errAborted
				}
			}
		}
		return nil
	})
	t.spawn(1, func() error { return runActor(t, actor, c, n) })
	return t.run(cfg.timeout)
}

// sharedRing is a mailbox.Host over a heap ring the benchmark also holds a
// ringbuf view of: the mailbox and the bare ring are two views of one
// Agrona ring, so one side of the mailbox can be replaced by the ring's.
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
