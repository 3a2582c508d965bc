package main

import (
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/dutyrt/duty/idle"
	"github.com/dutyrt/duty/internal/atomicbuf"
	"github.com/dutyrt/duty/internal/prefetch"
	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/ringbuf"
)

// Extra variants that locate where the time goes (docs/benchmarks.md,
// "Extra variants"). They run only when named in -variants.
func init() {
	w1.variants = append(w1.variants,
		variant{name: "onetoone-write-pause", extra: true, run: w1OneToOnePause},
		variant{name: "manytoone-write-pause", extra: true, run: w1ManyToOnePause},
		variant{name: "mailbox-pause", extra: true, run: w1MailboxPause},
		variant{name: "manytoone-write-spin", extra: true, run: w1ManyToOneIdle(idle.BusySpin)},
		variant{name: "mailbox-spin", extra: true, run: w1MailboxIdle(idle.BusySpin)},
		variant{name: "manytoone-write-backoff", extra: true, run: w1ManyToOneIdle(backoffIdle)},
		variant{name: "mailbox-backoff", extra: true, run: w1MailboxIdle(backoffIdle)},
		variant{name: "onetoone-write-noprefetch", extra: true, run: noPrefetch(w1OneToOneWrite)},
		variant{name: "batch16-onetoone-noprefetch", extra: true, run: noPrefetch(func(cfg *runConfig) (time.Duration, error) { return w1Batch16(cfg, true, false) })},
		variant{name: "batch16-noprefetch", extra: true, run: noPrefetch(func(cfg *runConfig) (time.Duration, error) { return w1Batch16(cfg, false, false) })},
		variant{name: "manytoone-write-noprefetch", extra: true, run: noPrefetch(w1ManyToOneWrite)},
		variant{name: "manytoone-write-nodemote", extra: true, run: noDemote(w1ManyToOneWrite)},
		variant{name: "mailbox-nodemote", extra: true, run: noDemote(w1Mailbox)},
		variant{name: "batch16-demote", extra: true, run: func(cfg *runConfig) (time.Duration, error) { return w1Batch16Demote(cfg, false, false, true) }},
	)
	w3.variants = append(w3.variants,
		variant{name: "onetoone-noprefetch", extra: true, run: noPrefetch(func(cfg *runConfig) (time.Duration, error) { return w3OneToOne(cfg, true) })},
		variant{name: "floor", extra: true, run: func(cfg *runConfig) (time.Duration, error) { return w3Floor(cfg, false) }},
		variant{name: "floor-zeronext", extra: true, run: func(cfg *runConfig) (time.Duration, error) { return w3Floor(cfg, true) }},
		variant{name: "mailbox-actors-nodemote", extra: true, run: noDemote(w3MailboxActors)},
	)
}

// noPrefetch runs a variant with the rings' prefetching turned off
// (internal/prefetch.Disabled), to measure what it gives in the same run.
func noPrefetch(run func(*runConfig) (time.Duration, error)) func(*runConfig) (time.Duration, error) {
	return func(cfg *runConfig) (time.Duration, error) {
		prefetch.Disabled = true
		defer func() { prefetch.Disabled = false }()
		return run(cfg)
	}
}

// noDemote runs a variant whose many-to-one consumer does not demote the
// lines it released (internal/prefetch.NoDemote; docs/ringbuf.md,
// "Demoting released lines").
func noDemote(run func(*runConfig) (time.Duration, error)) func(*runConfig) (time.Duration, error) {
	return func(cfg *runConfig) (time.Duration, error) {
		prefetch.NoDemote = true
		defer func() { prefetch.NoDemote = false }()
		return run(cfg)
	}
}

// pauseSpins is how many CPU spin-wait hints (PAUSE) onetoone-write-pause's
// consumer executes when it finds the ring empty, before polling again.
const pauseSpins = 64

// w1OneToOnePause is onetoone-write with a consumer that, finding the ring
// empty, waits pauseSpins PAUSEs before polling again instead of retrying at
// once: it stops polling the cache line the producer is writing, so the
// difference from onetoone-write is the cost of that contention
// (docs/idle.md, "Spinning with more hints").
func w1OneToOnePause(cfg *runConfig) (time.Duration, error) {
	r, _, err := newRings()
	if err != nil {
		return 0, err
	}
	return w1RingWaiting(cfg, r, pauseIdle)
}

// w1ManyToOnePause is w1OneToOnePause for manytoone-write.
func w1ManyToOnePause(cfg *runConfig) (time.Duration, error) { return w1ManyToOneIdle(pauseIdle)(cfg) }

// w1ManyToOneIdle and w1MailboxIdle are manytoone-write and mailbox whose
// consumer passes each call's count to an idle strategy from newIdle.
func w1ManyToOneIdle(newIdle func() idle.Strategy) func(*runConfig) (time.Duration, error) {
	return func(cfg *runConfig) (time.Duration, error) {
		_, r, err := newRings()
		if err != nil {
			return 0, err
		}
		return w1RingWaiting(cfg, r, newIdle)
	}
}

func w1MailboxIdle(newIdle func() idle.Strategy) func(*runConfig) (time.Duration, error) {
	return func(cfg *runConfig) (time.Duration, error) { return w1MailboxWaiting(cfg, newIdle) }
}

func w1RingWaiting(cfg *runConfig, r interface {
	writer
	Read(ringbuf.Handler, int) (int, error)
}, wait func() idle.Strategy) (time.Duration, error) {
	c := newChecker(1)
	h := ringbuf.Handler(c.check)
	return w1Waiting(cfg, c, wait, func(t *team, n, corruptAt int) error { return produceWrites(t, r, n, 0, corruptAt) },
		func() (int, error) { return r.Read(h, ringbuf.NoLimit) })
}

// w1MailboxPause is mailbox with onetoone-write-pause's consumer: the
// actor's DoWork, then pauseSpins PAUSEs when it did no work.
func w1MailboxPause(cfg *runConfig) (time.Duration, error) { return w1MailboxIdle(pauseIdle)(cfg) }

func w1MailboxWaiting(cfg *runConfig, wait func() idle.Strategy) (time.Duration, error) {
	mb, err := newBenchMailbox("w1")
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
	return w1Waiting(cfg, c, wait, func(t *team, n, corruptAt int) error { return produceSends(t, mb, n, 0, corruptAt) },
		actor.DoWork)
}

// The idle strategies of the consumers of the -pause, -spin and -backoff
// variants, as a runner would apply them after each duty cycle:
// pauseSpins spin hints (idle.NewBusySpin), one (idle.BusySpin, Agrona's
// busy spin) and Agrona's default backoff.
func pauseIdle() idle.Strategy {
	s, err := idle.NewBusySpin(pauseSpins)
	if err != nil {
		panic(err) // a constant in range
	}
	return s
}

func backoffIdle() idle.Strategy { return idle.Backoff() }

// w1Waiting runs produce in slot 0 and, in slot 1, a consumer that calls
// consume (which checks each message with c) until c has seen n messages,
// passing the count of each call to an idle strategy from newIdle.
func w1Waiting(cfg *runConfig, c *checker, newIdle func() idle.Strategy, produce func(t *team, n, corruptAt int) error, consume func() (int, error)) (time.Duration, error) {
	t := newTeam(cfg.place)
	n, corruptAt := cfg.n, cfg.corruptAt
	t.spawn(0, func() error { return produce(t, n, corruptAt) })
	t.spawn(1, func() error {
		s := newIdle()
		for c.received < n {
			k, err := consume()
			if err != nil {
				return err
			}
			if k == 0 && t.abort.Load() {
				return errAborted
			}
			s.Idle(k)
		}
		t.finish()
		return c.finish([]int{n})
	})
	return t.run(cfg.timeout)
}

// floorRing is the least a ring of 40-byte records can do, written for W3
// only: the record's 8-byte header holds the message number + 1 (so no
// zeroing, no head or tail, no wrap handling: the ping-pong never has more
// than one record in flight), stored with a release store after the
// payload. It measures the floor for duty's record layout in Go on this
// machine: cache-line transfers, the clock read and the checks.
type floorRing struct{ b []byte }

const floorRecord = 40

func (r floorRing) header(at int) *atomic.Int64 {
	return (*atomic.Int64)(unsafe.Pointer(unsafe.SliceData(r.b[at : at+8])))
}

// send publishes message i; with zeroNext it first stores into the next
// slot's header, as ringbuf.OneToOne zeroes the header after each record.
func (r floorRing) send(i int, p []byte, zeroNext bool) {
	slots := ringCapacity / floorRecord
	at := (i % slots) * floorRecord
	if zeroNext {
		atomicbuf.StoreRelease64(r.header(((i+1)%slots)*floorRecord), 0)
	}
	copy(r.b[at+8:at+floorRecord], p)
	atomicbuf.StoreRelease64(r.header(at), int64(i+1))
}

// await spins until message i is published and returns its payload.
func (r floorRing) await(t *team, i int) ([]byte, error) {
	at := (i % (ringCapacity / floorRecord)) * floorRecord
	for r.header(at).Load() != int64(i+1) {
		if t.abort.Load() {
			return nil, errAborted
		}
	}
	return r.b[at+8 : at+floorRecord], nil
}

func w3Floor(cfg *runConfig, zeroNext bool) (time.Duration, error) {
	b1, err := ringbuf.Allocate(ringCapacity)
	if err != nil {
		return 0, err
	}
	b2, err := ringbuf.Allocate(ringCapacity)
	if err != nil {
		return 0, err
	}
	ping, pong := floorRing{b1}, floorRing{b2}
	t := newTeam(cfg.place)
	n, corruptAt, lat := cfg.n, cfg.corruptAt, cfg.lat[:cfg.n]
	pc, c := newChecker(1), newChecker(1)
	t.spawn(0, func() error {
		var p [payloadLen]byte
		putPayload(p[:], 0, 0)
		clk := newClock()
		last := clk.now()
		for i := range n {
			putSeq(&p, seqFor(i, corruptAt))
			ping.send(i, p[:], zeroNext)
			q, err := pong.await(t, i)
			if err != nil {
				return err
			}
			pc.check(msgTypeID, q)
			now := clk.now()
			lat[i] = now - last
			last = now
		}
		t.finish()
		return pc.finish([]int{n})
	})
	t.spawn(1, func() error {
		for i := range n {
			q, err := ping.await(t, i)
			if err != nil {
				return err
			}
			c.check(msgTypeID, q)
			pong.send(i, q, zeroNext)
		}
		return c.finish([]int{n})
	})
	return t.run(cfg.timeout)
}
