package main

import (
	"runtime"
	"time"

	"github.com/dutyrt/duty/ringbuf"
)

// W2: two producers, one consumer, throughput, order checked per producer
// (docs/workloads.md, "W2: two producers, one consumer"). Three busy
// goroutines on two cores: oversubscribed by design. Producers run in slots
// 0 and 1, the consumer in slot 2.
var w2 = &workload{
	name:        "w2",
	kind:        kindThroughput,
	defaultN:    20_000_000,
	defaultReps: 10,
	variants: []variant{
		{name: "chan", run: w2Chan, goroutines: true},
		{name: "manytoone-spin", run: func(cfg *runConfig) (time.Duration, error) { return w2ManyToOne(cfg, false) }},
		{name: "manytoone-yield", run: func(cfg *runConfig) (time.Duration, error) { return w2ManyToOne(cfg, true) }},
	},
}

const w2Producers = 2

// w2Split returns how many messages each producer sends: n in all.
func w2Split(n int) []int {
	out := make([]int, w2Producers)
	for i := range out {
		out[i] = n / w2Producers
	}
	out[0] += n % w2Producers
	return out
}

func w2Chan(cfg *runConfig) (time.Duration, error) {
	ch := make(chan [payloadLen]byte, chanCapacity)
	t := newTeam(cfg.place)
	c := newChecker(w2Producers)
	split := w2Split(cfg.n)
	for id, count := range split {
		corruptAt := -1
		if id == 0 {
			corruptAt = cfg.corruptAt
		}
		t.spawn(id, func() error {
			var p [payloadLen]byte
			putPayload(p[:], 0, uint64(id))
			for i := range count {
				putSeq(&p, seqFor(i, corruptAt))
				ch <- p
			}
			return nil
		})
	}
	n := cfg.n
	t.spawn(w2Producers, func() error {
		for range n {
			p := <-ch
			c.checkArray(&p)
		}
		t.finish()
		return c.finish(split)
	})
	return t.run(cfg.timeout)
}

func w2ManyToOne(cfg *runConfig, yield bool) (time.Duration, error) {
	_, r, err := newRings()
	if err != nil {
		return 0, err
	}
	t := newTeam(cfg.place)
	c := newChecker(w2Producers)
	split := w2Split(cfg.n)
	for id, count := range split {
		corruptAt := -1
		if id == 0 {
			corruptAt = cfg.corruptAt
		}
		t.spawn(id, func() error { return produceW2(t, r, count, uint64(id), corruptAt, yield) })
	}
	n := cfg.n
	t.spawn(w2Producers, func() error {
		if err := consumeRing(t, r.Read, c, n); err != nil {
			return err
		}
		return c.finish(split)
	})
	return t.run(cfg.timeout)
}

// produceW2 writes count messages as producer id; when the ring is full it
// retries at once (spin) or after runtime.Gosched (yield).
func produceW2(t *team, r *ringbuf.ManyToOne, count int, id uint64, corruptAt int, yield bool) error {
	var p [payloadLen]byte
	putPayload(p[:], 0, id)
	for i := range count {
		putSeq(&p, seqFor(i, corruptAt))
		for {
			err := r.Write(msgTypeID, p[:])
			if err == nil {
				break
			}
			if err != ringbuf.ErrFull {
				return err
			}
			if t.abort.Load() {
				return errAborted
			}
			if yield {
				runtime.Gosched()
			}
		}
	}
	return nil
}
