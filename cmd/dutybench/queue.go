package main

import (
	"time"

	"github.com/dutyrt/duty/queue"
)

// The object queues (queue) in W1, as extra variants: the same
// 32-byte payload as a [32]byte value, in a queue of the channel's 2048
// elements (the same 64 KiB). The producer offers, retrying at once while
// the queue is full; the consumer drains up to the capacity per call,
// retrying at once while it is empty, and checks every element as the
// other variants do. Not among the standard variants: docs/queue.md
// compares them with the channel of the same run.
func init() {
	w1.variants = append(w1.variants,
		variant{name: "queue-onetoone", extra: true, run: func(cfg *runConfig) (time.Duration, error) {
			return w1Queue(cfg, func() (queue.Pipe[[payloadLen]byte], error) { return queue.NewOneToOne[[payloadLen]byte](chanCapacity) })
		}},
		variant{name: "queue-manytoone", extra: true, run: func(cfg *runConfig) (time.Duration, error) {
			return w1Queue(cfg, func() (queue.Pipe[[payloadLen]byte], error) {
				return queue.NewManyToOne[[payloadLen]byte](chanCapacity)
			})
		}},
		variant{name: "queue-manytomany", extra: true, run: func(cfg *runConfig) (time.Duration, error) {
			return w1Queue(cfg, func() (queue.Pipe[[payloadLen]byte], error) {
				return queue.NewManyToMany[[payloadLen]byte](chanCapacity)
			})
		}},
	)
}

func w1Queue(cfg *runConfig, newQueue func() (queue.Pipe[[payloadLen]byte], error)) (time.Duration, error) {
	q, err := newQueue()
	if err != nil {
		return 0, err
	}
	t := newTeam(cfg.place)
	c := newChecker(1)
	n, corruptAt := cfg.n, cfg.corruptAt
	t.spawn(0, func() error {
		var p [payloadLen]byte
		putPayload(p[:], 0, 0)
		for i := range n {
			putSeq(&p, seqFor(i, corruptAt))
			for !q.Offer(p) {
				if t.abort.Load() {
					return errAborted
				}
			}
		}
		return nil
	})
	t.spawn(1, func() error {
		check := func(p [payloadLen]byte) { c.checkArray(&p) }
		for c.received < n {
			if q.Drain(check, chanCapacity) == 0 && t.abort.Load() {
				return errAborted
			}
		}
		t.finish()
		return c.finish([]int{n})
	})
	return t.run(cfg.timeout)
}
