package main

import (
	"fmt"
	"time"

	"github.com/dutyrt/duty/ringbuf"
)

// W1: one producer, one consumer, throughput (docs/workloads.md, "W1: one
// producer, one consumer"). The producer runs in slot 0, the consumer in
// slot 1.
var w1 = &workload{
	name:        "w1",
	kind:        kindThroughput,
	defaultN:    20_000_000,
	defaultReps: 10,
	variants: []variant{
		{name: "chan", run: w1Chan, goroutines: true},
		{name: "onetoone-write", run: w1OneToOneWrite},
		{name: "manytoone-write", run: w1ManyToOneWrite},
		{name: "manytoone-claim", run: w1ManyToOneClaim},
		{name: "batch16", run: func(cfg *runConfig) (time.Duration, error) { return w1Batch16(cfg, false, false) }},
		{name: "chan-locked", run: w1Chan, extra: true},
		{name: "batch16-onetoone", run: func(cfg *runConfig) (time.Duration, error) { return w1Batch16(cfg, true, false) }, extra: true},
		{name: "batch16-append", run: func(cfg *runConfig) (time.Duration, error) { return w1Batch16(cfg, false, true) }, extra: true},
	},
}

// ringCapacity is the data capacity of every ring (docs/workloads.md,
// "Common rules"): 64 KiB plus
// the trailer. chanCapacity is the same 64 KiB as 32-byte channel elements.
const (
	ringCapacity = 65536
	chanCapacity = 2048
	batchRecords = 16
)

func w1Chan(cfg *runConfig) (time.Duration, error) {
	ch := make(chan [payloadLen]byte, chanCapacity)
	t := newTeam(cfg.place)
	c := newChecker(1)
	n, corruptAt := cfg.n, cfg.corruptAt
	t.spawn(0, func() error {
		var p [payloadLen]byte
		putPayload(p[:], 0, 0)
		for i := range n {
			putSeq(&p, seqFor(i, corruptAt))
			ch <- p
		}
		return nil
	})
	t.spawn(1, func() error {
		for range n {
			p := <-ch
			c.checkArray(&p)
		}
		t.finish()
		return c.finish([]int{n})
	})
	return t.run(cfg.timeout)
}

// writer is either ring type (an interface, not a method value: a method
// value's call goes through a wrapper, one more frame per message).
type writer interface {
	Write(typeID int32, payload []byte) error
}

// produceWrites sends n messages as producer id with w, spinning while the
// ring is full.
func produceWrites(t *team, w writer, n int, id uint64, corruptAt int) error {
	var p [payloadLen]byte
	putPayload(p[:], 0, id)
	for i := range n {
		putSeq(&p, seqFor(i, corruptAt))
		for {
			err := w.Write(msgTypeID, p[:])
			if err == nil {
				break
			}
			if err != ringbuf.ErrFull {
				return err
			}
			if t.abort.Load() {
				return errAborted
			}
		}
	}
	return nil
}

// consumeRing reads until the checker has seen n messages, spinning while
// the ring is empty, then records the end time.
func consumeRing(t *team, read func(ringbuf.Handler, int) (int, error), c *checker, n int) error {
	h := ringbuf.Handler(c.check)
	for c.received < n {
		k, err := read(h, ringbuf.NoLimit)
		if err != nil {
			return err
		}
		if k == 0 && t.abort.Load() {
			return errAborted
		}
	}
	t.finish()
	return nil
}

func newRings() (*ringbuf.OneToOne, *ringbuf.ManyToOne, error) {
	b1, err := ringbuf.Allocate(ringCapacity)
	if err != nil {
		return nil, nil, err
	}
	o, err := ringbuf.NewOneToOne(b1)
	if err != nil {
		return nil, nil, err
	}
	b2, err := ringbuf.Allocate(ringCapacity)
	if err != nil {
		return nil, nil, err
	}
	m, err := ringbuf.NewManyToOne(b2)
	if err != nil {
		return nil, nil, err
	}
	return o, m, nil
}

func w1OneToOneWrite(cfg *runConfig) (time.Duration, error) {
	r, _, err := newRings()
	if err != nil {
		return 0, err
	}
	return w1Ring(cfg, r, r.Read)
}

func w1ManyToOneWrite(cfg *runConfig) (time.Duration, error) {
	_, r, err := newRings()
	if err != nil {
		return 0, err
	}
	return w1Ring(cfg, r, r.Read)
}

func w1Ring(cfg *runConfig, w writer, read func(ringbuf.Handler, int) (int, error)) (time.Duration, error) {
	t := newTeam(cfg.place)
	c := newChecker(1)
	n, corruptAt := cfg.n, cfg.corruptAt
	t.spawn(0, func() error { return produceWrites(t, w, n, 0, corruptAt) })
	t.spawn(1, func() error {
		if err := consumeRing(t, read, c, n); err != nil {
			return err
		}
		return c.finish([]int{n})
	})
	return t.run(cfg.timeout)
}

func w1ManyToOneClaim(cfg *runConfig) (time.Duration, error) {
	_, r, err := newRings()
	if err != nil {
		return 0, err
	}
	t := newTeam(cfg.place)
	c := newChecker(1)
	n, corruptAt := cfg.n, cfg.corruptAt
	t.spawn(0, func() error {
		for i := range n {
			var cl ringbuf.Claim
			var err error // the producer's own: not the enclosing function's (a captured variable is a store through a pointer)
			for {
				cl, err = r.TryClaim(msgTypeID, payloadLen)
				if err == nil {
					break
				}
				if err != ringbuf.ErrFull {
					return err
				}
				if t.abort.Load() {
					return errAborted
				}
			}
			putPayload(cl.Payload, seqFor(i, corruptAt), 0)
			if err := r.Commit(cl.Index); err != nil {
				return err
			}
		}
		return nil
	})
	t.spawn(1, func() error {
		if err := consumeRing(t, r.Read, c, n); err != nil {
			return err
		}
		return c.finish([]int{n})
	})
	return t.run(cfg.timeout)
}

// batchRing is the batch API of either ring type.
type batchRing interface {
	TryClaimBatch(size int) (ringbuf.Batch, error)
	CommitBatch(b ringbuf.Batch) error
	AbortBatch(b ringbuf.Batch) error
	TryClaimRecords(typeID int32, length, count int) (ringbuf.Records, error)
	CommitRecords(rs ringbuf.Records) error
	Read(h ringbuf.Handler, limit int) (int, error)
}

// w1Batch16 runs batch16 on a many-to-one ring (the standard variant), or on a
// one-to-one ring (the extra variant batch16-onetoone): 16 records per
// claim with TryClaimRecords, or (the extra variant batch16-append) with
// TryClaimBatch and Append. The many-to-one consumer does not demote the
// lines it releases, as ManyToOne.SetDemote advises behind producers of
// many records per claim (the extra variant batch16-demote keeps the
// ring's default; docs/ringbuf.md, "Demoting released lines").
func w1Batch16(cfg *runConfig, oneToOne, appendEach bool) (time.Duration, error) {
	return w1Batch16Demote(cfg, oneToOne, appendEach, false)
}

func w1Batch16Demote(cfg *runConfig, oneToOne, appendEach, demote bool) (time.Duration, error) {
	o, m, err := newRings()
	if err != nil {
		return 0, err
	}
	m.SetDemote(demote)
	var r batchRing = m
	if oneToOne {
		r = o
	}
	t := newTeam(cfg.place)
	c := newChecker(1)
	n, corruptAt := cfg.n, cfg.corruptAt
	produce := produceRecords
	if appendEach {
		produce = produceBatches
	}
	t.spawn(0, func() error { return produce(t, r, n, corruptAt) })
	t.spawn(1, func() error {
		if err := consumeRing(t, r.Read, c, n); err != nil {
			return err
		}
		return c.finish([]int{n})
	})
	return t.run(cfg.timeout)
}

// produceRecords sends n messages in claims of 16 records (the last claim
// takes what is left): TryClaimRecords, fill 16 payloads, CommitRecords.
func produceRecords(t *team, r batchRing, n, corruptAt int) error {
	for i := 0; i < n; {
		k := min(batchRecords, n-i)
		var rs ringbuf.Records
		var err error
		for {
			rs, err = r.TryClaimRecords(msgTypeID, payloadLen, k)
			if err == nil {
				break
			}
			if err != ringbuf.ErrFull {
				return err
			}
			if t.abort.Load() {
				return errAborted
			}
		}
		for j := range k {
			putPayload(rs.Payload(j), seqFor(i+j, corruptAt), 0)
		}
		if err := r.CommitRecords(rs); err != nil {
			return err
		}
		i += k
	}
	return nil
}

// produceBatches sends n messages in claims of 16 records (the last claim
// takes what is left): TryClaimBatch, 16 Appends, CommitBatch.
func produceBatches(t *team, r batchRing, n, corruptAt int) error {
	for i := 0; i < n; {
		k := min(batchRecords, n-i)
		var b ringbuf.Batch
		var err error
		for {
			b, err = r.TryClaimBatch(k * ringbuf.RecordSize(payloadLen))
			if err == nil {
				break
			}
			if err != ringbuf.ErrFull {
				return err
			}
			if t.abort.Load() {
				return errAborted
			}
		}
		for j := range k {
			p, err := b.Append(msgTypeID, payloadLen)
			if err != nil {
				return fmt.Errorf("%w (abort: %w)", err, r.AbortBatch(b))
			}
			putPayload(p, seqFor(i+j, corruptAt), 0)
		}
		if err := r.CommitBatch(b); err != nil {
			return err
		}
		i += k
	}
	return nil
}
