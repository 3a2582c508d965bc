package main

import (
	"sync/atomic"

	"github.com/dutyrt/duty/ringbuf"
)

// lockedWriter is a one-to-one ring whose Write first performs one locked
// read-modify-write (an atomic add) on a word of its own cache line, where
// a many-to-one ring's claim performs its compare-and-swap of the tail.
// Nothing reads the word: the variant costs the one-to-one ring exactly
// one locked instruction per record, which on x86 waits for the store
// buffer to drain (the previous record's publication included), so it
// isolates what the many-to-one claim's atomic costs apart from the rest
// of its protocol (docs/benchmarks.md, "The host and the limit").
type lockedWriter struct {
	*ringbuf.OneToOne
	_    [64]byte
	word atomic.Int64
	_    [56]byte
}

// Write adds one to the private word, then writes as OneToOne.Write does.
func (w *lockedWriter) Write(typeID int32, payload []byte) error {
	w.word.Add(1)
	return w.OneToOne.Write(typeID, payload)
}

// lockedWrites is onetoone-write-locked's producer: Write through a
// lockedWriter over the one-to-one ring, spinning while it is full.
func lockedWrites(t *team, r benchRing, _ *ringbuf.ManyToOne, id, count, corruptAt int) error {
	return produce(t, &lockedWriter{OneToOne: r.(*ringbuf.OneToOne)}, count, uint64(id), corruptAt, ringbuf.ErrFull, nil)
}
