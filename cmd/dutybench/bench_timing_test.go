package main

import (
	"testing"
	"time"

	"github.com/dutyrt/duty/ringbuf"
)

// These benchmarks are for profiling dutybench's variants, not for the
// comparisons of docs/benchmarks.md (run dutybench for those).
//
// BenchmarkOneThread* write a burst of messages and read them back on one
// goroutine: no cache line moves between cores, so ns/op is the software
// cost of one message (producer side plus consumer side), the part of W1
// that no hardware phase explains.

const burst = 1000 // 40 KB of records: fits the 64 KiB ring

func BenchmarkOneThreadChan(b *testing.B) {
	ch := make(chan [payloadLen]byte, chanCapacity)
	c := newChecker(1)
	var p [payloadLen]byte
	putPayload(p[:], 0, 0)
	b.ReportAllocs()
	seq := 0
	for i := 0; i < b.N; i += burst {
		for range burst {
			putSeq(&p, uint64(seq))
			seq++
			ch <- p
		}
		for range burst {
			q := <-ch
			c.checkArray(&q)
		}
	}
	if c.err != nil {
		b.Fatal(c.err)
	}
}

func oneThreadWrites(b *testing.B, w writer, read func(ringbuf.Handler, int) (int, error)) {
	c := newChecker(1)
	h := ringbuf.Handler(c.check)
	var p [payloadLen]byte
	putPayload(p[:], 0, 0)
	b.ReportAllocs()
	seq := 0
	for i := 0; i < b.N; i += burst {
		for range burst {
			putSeq(&p, uint64(seq))
			seq++
			if err := w.Write(msgTypeID, p[:]); err != nil {
				b.Fatal(err)
			}
		}
		for c.received < seq {
			if _, err := read(h, ringbuf.NoLimit); err != nil {
				b.Fatal(err)
			}
		}
	}
	if c.err != nil {
		b.Fatal(c.err)
	}
}

func BenchmarkOneThreadOneToOneWrite(b *testing.B) {
	r, _, err := newRings()
	if err != nil {
		b.Fatal(err)
	}
	oneThreadWrites(b, r, r.Read)
}

func BenchmarkOneThreadManyToOneWrite(b *testing.B) {
	_, r, err := newRings()
	if err != nil {
		b.Fatal(err)
	}
	oneThreadWrites(b, r, r.Read)
}

func BenchmarkOneThreadManyToOneClaim(b *testing.B) {
	_, r, err := newRings()
	if err != nil {
		b.Fatal(err)
	}
	c := newChecker(1)
	h := ringbuf.Handler(c.check)
	b.ReportAllocs()
	seq := 0
	for i := 0; i < b.N; i += burst {
		for range burst {
			cl, err := r.TryClaim(msgTypeID, payloadLen)
			if err != nil {
				b.Fatal(err)
			}
			putPayload(cl.Payload, uint64(seq), 0)
			seq++
			if err := r.Commit(cl.Index); err != nil {
				b.Fatal(err)
			}
		}
		for c.received < seq {
			if _, err := r.Read(h, ringbuf.NoLimit); err != nil {
				b.Fatal(err)
			}
		}
	}
	if c.err != nil {
		b.Fatal(c.err)
	}
}

func oneThreadBatches(b *testing.B, r batchRing) {
	c := newChecker(1)
	h := ringbuf.Handler(c.check)
	t := newTeam(placement{})
	b.ReportAllocs()
	seq := 0
	for i := 0; i < b.N; i += burst {
		// produceBatches numbers from 0: restart the checker per burst.
		c.reset()
		if err := produceBatches(t, r, burst, -1); err != nil {
			b.Fatal(err)
		}
		for c.received < burst {
			if _, err := r.Read(h, ringbuf.NoLimit); err != nil {
				b.Fatal(err)
			}
		}
		seq += burst
	}
	if c.err != nil {
		b.Fatal(c.err)
	}
}

func BenchmarkOneThreadBatch16ManyToOne(b *testing.B) {
	_, r, err := newRings()
	if err != nil {
		b.Fatal(err)
	}
	oneThreadBatches(b, r)
}

func BenchmarkOneThreadBatch16OneToOne(b *testing.B) {
	r, _, err := newRings()
	if err != nil {
		b.Fatal(err)
	}
	oneThreadBatches(b, r)
}

// BenchmarkVariant runs each variant for real (two threads, the flags'
// default placement) with b.N messages or round trips in one repetition,
// and reports ns per message from the variant's own timing.
func BenchmarkVariant(b *testing.B) {
	place := placement{lock: true, cpus: firstCPUs(2)}
	for _, w := range registry {
		for _, v := range w.variants {
			b.Run(w.name+"/"+v.name, func(b *testing.B) {
				cfg := &runConfig{n: max(b.N, 1), place: place, timeout: 5 * time.Minute, corruptAt: -1}
				if v.goroutines {
					cfg.place = placement{}
				}
				if w.kind == kindLatency {
					cfg.lat = make([]int64, cfg.n)
				}
				b.ReportAllocs()
				elapsed, err := v.run(cfg)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(elapsed.Nanoseconds())/float64(cfg.n), "ns/msg")
			})
		}
	}
}
