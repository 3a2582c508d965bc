package main

import (
	"fmt"
	"time"

	"github.com/dutyrt/duty/idle"
	"github.com/dutyrt/duty/queue"
	"github.com/dutyrt/duty/ringbuf"
)

// W1 and W2 (docs/workloads.md): throughput through a ring, a channel or
// an object queue.

const (
	ringCapacity = 65536 // every ring's data (docs/workloads.md, "Common rules")
	chanCapacity = 2048  // the same 64 KiB as 32-byte elements
	batchRecords = 16
)

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

// newRing allocates a ring, a many-to-one one also as such (else nil).
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

func newOneToOne() (*ringbuf.OneToOne, error) {
	b, err := ringbuf.Allocate(ringCapacity)
	if err != nil {
		return nil, err
	}
	return ringbuf.NewOneToOne(b)
}

// ringReader is the poller of a consumer that reads r into a checker.
type ringReader struct {
	r reader
	h ringbuf.Handler
}

type reader interface {
	Read(ringbuf.Handler, int) (int, error)
}

func readAll(r reader, c *checker) *ringReader { return &ringReader{r: r, h: c.check} }

func (p *ringReader) DoWork() (int, error) { return p.r.Read(p.h, ringbuf.NoLimit) }

// chanStream is W1's chan (and chan-locked) and W2's chan.
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

// ringProducer sends count messages as producer id into r (m: the same
// ring as a many-to-one).
type ringProducer func(t *team, r benchRing, m *ringbuf.ManyToOne, id, count, corruptAt int) error

// ringStream is a throughput variant over a new ring of kind k: producers
// each running send, a consumer reading with Read and passing each call's
// count to newIdle's strategy, if any (the -pause, -spin and -backoff
// extras); without demote, a many-to-one consumer does not demote.
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

func ringWrite(k ringKind, newIdle func() idle.Strategy) runFunc {
	return ringStream(k, 1, newIdle, true, writes(nil))
}

// writes is the producer that sends with Write (wait: see produce).
func writes(wait func()) ringProducer {
	return func(t *team, r benchRing, _ *ringbuf.ManyToOne, id, count, corruptAt int) error {
		return produce(t, r, count, uint64(id), corruptAt, ringbuf.ErrFull, wait)
	}
}

// pauseIdle is the -pause variants' consumer: 64 PAUSE hints on an empty
// ring before it polls the producer's line again (docs/idle.md).
func pauseIdle() idle.Strategy {
	s, _ := idle.NewBusySpin(64)
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

// batch16 is batch16 (TryClaimRecords, 16 per claim; no demotion, as
// ManyToOne.SetDemote advises for such producers) and its extras: on a
// one-to-one ring, with TryClaimBatch and Append (appendEach), demoting.
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

// claimRecords sends messages [i, i+k) in one TryClaimRecords.
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

// claimAppends sends messages [i, i+k) in one TryClaimBatch, k Appends.
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

// The object queues (package queue) as extra W1 variants: the payload as a
// [32]byte value in a queue of the channel's size.
type payloadQueue = queue.Pipe[[payloadLen]byte]

//go:noinline // a variant factory: see runFunc
func queueStream[Q payloadQueue](newQueue func(capacity int) (Q, error)) runFunc {
	return func(cfg *runConfig) (time.Duration, error) {
		var q payloadQueue // called through the interface, whatever Q is
		q, err := newQueue(chanCapacity)
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

// without runs a variant with off (prefetch.Disabled: the -noprefetch
// extras; prefetch.NoDemote: -nodemote) set.
func without(off *bool, run runFunc) runFunc {
	return func(cfg *runConfig) (time.Duration, error) {
		*off = true
		defer func() { *off = false }()
		return run(cfg)
	}
}
