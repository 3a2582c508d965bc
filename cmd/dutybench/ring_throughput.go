package main

import (
	"fmt"
	"runtime"
	"time"

	"github.com/dutyrt/duty/idle"
	"github.com/dutyrt/duty/internal/prefetch"
	"github.com/dutyrt/duty/queue"
	"github.com/dutyrt/duty/ringbuf"
)

// W1 (one producer, one consumer) and W2 (two producers, one consumer):
// throughput through a ring, a channel or an object queue
// (docs/workloads.md, "W1" and "W2"). Producers run in slots 0 (and 1),
// the consumer in the slot after them.

// ringCapacity is the data capacity of every ring (docs/workloads.md,
// "Common rules"): 64 KiB plus the trailer. chanCapacity is the same
// 64 KiB as 32-byte channel elements.
const (
	ringCapacity = 65536
	chanCapacity = 2048
	batchRecords = 16
)

// ringKind says which ring type a variant uses.
type ringKind bool

const (
	oneToOne  ringKind = true
	manyToOne ringKind = false
)

// benchRing is what the W1 variants use of either ring type.
type benchRing interface {
	writer
	Read(h ringbuf.Handler, limit int) (int, error)
	TryClaimBatch(size int) (ringbuf.Batch, error)
	CommitBatch(b ringbuf.Batch) error
	AbortBatch(b ringbuf.Batch) error
	TryClaimRecords(typeID int32, length, count int) (ringbuf.Records, error)
	CommitRecords(rs ringbuf.Records) error
}

// newRing allocates a ring of the standard capacity. A many-to-one ring is
// returned as such too (nil for one-to-one) for what only it has.
func newRing(k ringKind) (benchRing, *ringbuf.ManyToOne, error) {
	b, err := ringbuf.Allocate(ringCapacity)
	if err != nil {
		return nil, nil, err
	}
	if k == oneToOne {
		r, err := ringbuf.NewOneToOne(b)
		return r, nil, err
	}
	r, err := ringbuf.NewManyToOne(b)
	return r, r, err
}

// newOneToOne allocates a one-to-one ring of the standard capacity.
func newOneToOne() (*ringbuf.OneToOne, error) {
	b, err := ringbuf.Allocate(ringCapacity)
	if err != nil {
		return nil, err
	}
	return ringbuf.NewOneToOne(b)
}

// ringReader is the poller of a consumer that reads r into a checker.
type ringReader struct {
	r interface {
		Read(ringbuf.Handler, int) (int, error)
	}
	h ringbuf.Handler
}

func readAll(r interface {
	Read(ringbuf.Handler, int) (int, error)
}, c *checker) *ringReader {
	return &ringReader{r: r, h: c.check}
}

func (p *ringReader) DoWork() (int, error) { return p.r.Read(p.h, ringbuf.NoLimit) }

// chanStream is W1's chan (and chan-locked) with one producer, W2's with
// two: blocking sends of [32]byte values into a channel of 2048.
//
//go:noinline // a variant factory: see runFunc
func chanStream(producers int) runFunc {
	return func(cfg *runConfig) (time.Duration, error) { return chanProducers(cfg, producers) }
}

func chanProducers(cfg *runConfig, producers int) (time.Duration, error) {
	ch := make(chan [payloadLen]byte, chanCapacity)
	c := newChecker(producers)
	send := make([]func() error, producers)
	for id, count := range split(cfg.n, producers) {
		corruptAt := cfg.corruptFor(id)
		send[id] = func() error {
			var p [payloadLen]byte
			putPayload(p[:], 0, uint64(id))
			for i := range count {
				putSeq(&p, seqFor(i, corruptAt))
				ch <- p
			}
			return nil
		}
	}
	return stream(cfg, newTeam(cfg.place), c, func() error {
		for range cfg.n {
			p := <-ch
			c.checkArray(&p)
		}
		return nil
	}, send...)
}

// ringProducer sends count messages as producer id into r (ring, the
// same ring as its own type).
type ringProducer func(t *team, r benchRing, ring *ringbuf.ManyToOne, id, count, corruptAt int) error

// ringStream returns a throughput variant over a new ring of kind k:
// producers producers (W2: two), each running send, and a consumer that
// reads with Read, passing each call's count to newIdle's strategy, if
// any (the -pause, -spin and -backoff extras), or retrying at once.
// A many-to-one ring keeps its default demotion of released lines, or
// with demote false, does not demote.
//
//go:noinline // a variant factory: see runFunc
func ringStream(k ringKind, producers int, newIdle func() idle.Strategy, demote bool, send ringProducer) runFunc {
	return func(cfg *runConfig) (time.Duration, error) {
		r, m, err := newRing(k)
		if err != nil {
			return 0, err
		}
		if m != nil && !demote {
			m.SetDemote(false)
		}
		c := newChecker(producers)
		t := newTeam(cfg.place)
		var s idle.Strategy
		if newIdle != nil {
			s = newIdle()
		}
		fns := make([]func() error, producers)
		for id, count := range split(cfg.n, producers) {
			fns[id] = func() error { return send(t, r, m, id, count, cfg.corruptFor(id)) }
		}
		return stream(cfg, t, c, func() error { return pollUntil(t, c, cfg.n, s, readAll(r, c)) }, fns...)
	}
}

// ringWrite is onetoone-write and manytoone-write (Write, Read), and with
// newIdle their extras.
func ringWrite(k ringKind, newIdle func() idle.Strategy) runFunc {
	return ringStream(k, 1, newIdle, true, writes(nil))
}

// writes returns the producer that sends with Write, spinning while the
// ring is full (running wait, if not nil, between attempts).
func writes(wait func()) ringProducer {
	return func(t *team, r benchRing, _ *ringbuf.ManyToOne, id, count, corruptAt int) error {
		return produce(t, r, count, uint64(id), corruptAt, ringbuf.ErrFull, wait)
	}
}

// twoProducers is W2's manytoone-spin and manytoone-yield: two producers
// writing to one many-to-one ring, retrying at once or after
// runtime.Gosched when it is full.
func twoProducers(yield bool) runFunc {
	if yield {
		return ringStream(manyToOne, 2, nil, true, writes(runtime.Gosched))
	}
	return ringStream(manyToOne, 2, nil, true, writes(nil))
}

// pauseSpins is how many CPU spin-wait hints (PAUSE) the -pause variants'
// consumer executes when it finds the ring empty, before polling again:
// it stops polling the line the producer is writing (docs/idle.md,
// "Spinning with more hints").
const pauseSpins = 64

func pauseIdle() idle.Strategy {
	s, err := idle.NewBusySpin(pauseSpins)
	if err != nil {
		panic(err) // a constant in range
	}
	return s
}

// manyToOneClaim is manytoone-claim: TryClaim, fill, Commit.
var manyToOneClaim = ringStream(manyToOne, 1, nil, true, func(t *team, _ benchRing, r *ringbuf.ManyToOne, _, count, corruptAt int) error {
	for i := range count {
		var cl ringbuf.Claim
		if err := t.retry(ringbuf.ErrFull, func() (err error) { cl, err = r.TryClaim(msgTypeID, payloadLen); return err }); err != nil {
			return err
		}
		putPayload(cl.Payload, seqFor(i, corruptAt), 0)
		if err := r.Commit(cl.Index); err != nil {
			return err
		}
	}
	return nil
})

// batch16 is batch16 (16 records per claim with TryClaimRecords on a
// many-to-one ring) and its extras: on a one-to-one ring, with
// TryClaimBatch and Append (appendEach), with the consumer demoting the
// lines it releases (demote; batch16 does not, as ManyToOne.SetDemote
// advises behind producers of many records per claim).
//
//go:noinline // a variant factory: see runFunc
func batch16(k ringKind, appendEach, demote bool) runFunc {
	claim := claimRecords
	if appendEach {
		claim = claimAppends
	}
	return ringStream(k, 1, nil, demote, func(t *team, r benchRing, _ *ringbuf.ManyToOne, _, count, corruptAt int) error {
		for i := 0; i < count; i += batchRecords {
			if err := claim(t, r, i, min(batchRecords, count-i), corruptAt); err != nil {
				return err
			}
		}
		return nil
	})
}

// claimRecords sends messages [i, i+k) in one claim: TryClaimRecords,
// fill k payloads, CommitRecords.
func claimRecords(t *team, r benchRing, i, k, corruptAt int) error {
	var rs ringbuf.Records
	if err := t.retry(ringbuf.ErrFull, func() (err error) { rs, err = r.TryClaimRecords(msgTypeID, payloadLen, k); return err }); err != nil {
		return err
	}
	for j := range k {
		putPayload(rs.Payload(j), seqFor(i+j, corruptAt), 0)
	}
	return r.CommitRecords(rs)
}

// claimAppends sends messages [i, i+k) in one claim: TryClaimBatch, k
// Appends, CommitBatch.
func claimAppends(t *team, r benchRing, i, k, corruptAt int) error {
	var b ringbuf.Batch
	if err := t.retry(ringbuf.ErrFull, func() (err error) { b, err = r.TryClaimBatch(k * ringbuf.RecordSize(payloadLen)); return err }); err != nil {
		return err
	}
	for j := range k {
		p, err := b.Append(msgTypeID, payloadLen)
		if err != nil {
			return fmt.Errorf("%w (abort: %w)", err, r.AbortBatch(b))
		}
		putPayload(p, seqFor(i+j, corruptAt), 0)
	}
	return r.CommitBatch(b)
}

// The object queues (package queue) as extra W1 variants: the payload as
// a [32]byte value in a queue of 2048 elements (the channel's 64 KiB),
// offered until accepted and drained 2048 at most per call.
type payloadQueue = queue.Pipe[[payloadLen]byte]

func queueOneToOne() (payloadQueue, error) { return queue.NewOneToOne[[payloadLen]byte](chanCapacity) }
func queueManyToOne() (payloadQueue, error) {
	return queue.NewManyToOne[[payloadLen]byte](chanCapacity)
}
func queueManyToMany() (payloadQueue, error) {
	return queue.NewManyToMany[[payloadLen]byte](chanCapacity)
}

//go:noinline // a variant factory: see runFunc
func queueStream(newQueue func() (payloadQueue, error)) runFunc {
	return func(cfg *runConfig) (time.Duration, error) {
		q, err := newQueue()
		if err != nil {
			return 0, err
		}
		c := newChecker(1)
		t := newTeam(cfg.place)
		check := func(p [payloadLen]byte) { c.checkArray(&p) }
		drain := pollFunc(func() (int, error) { return q.Drain(check, chanCapacity), nil })
		return stream(cfg, t, c, func() error { return pollUntil(t, c, cfg.n, nil, drain) },
			func() error { return produce(t, queueWriter{q}, cfg.n, 0, cfg.corruptAt, ringbuf.ErrFull, nil) })
	}
}

// queueWriter offers a payload to a queue; a full queue is ringbuf.ErrFull.
type queueWriter struct{ q payloadQueue }

func (w queueWriter) Write(_ int32, p []byte) error {
	if !w.q.Offer([payloadLen]byte(p)) {
		return ringbuf.ErrFull
	}
	return nil
}

// noPrefetch runs a variant with the rings' prefetching turned off
// (internal/prefetch.Disabled), to measure what it gives in the same run.
func noPrefetch(run runFunc) runFunc {
	return func(cfg *runConfig) (time.Duration, error) {
		prefetch.Disabled = true
		defer func() { prefetch.Disabled = false }()
		return run(cfg)
	}
}

// noDemote runs a variant whose many-to-one consumer does not demote the
// lines it released (internal/prefetch.NoDemote; docs/ringbuf.md,
// "Demoting released lines").
func noDemote(run runFunc) runFunc {
	return func(cfg *runConfig) (time.Duration, error) {
		prefetch.NoDemote = true
		defer func() { prefetch.NoDemote = false }()
		return run(cfg)
	}
}
