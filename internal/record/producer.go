package record

import (
	"sync/atomic"
	"unsafe"
)

// cacheLine is the padding that keeps a word one core writes off the
// lines others read.
const cacheLine = 64

// MaxPayload is the largest payload the fast path writes: up to it the copy
// is a few vector moves in line (CopyBlocks, CopyShort).
const MaxPayload = 64

// Producer is the fast-path state of one view of a many-to-one ring: where
// the ring is, and a guess of its tail.
//
// The guess (the hint) is the tail this view's producers last claimed up
// to, never ahead of the real tail. A claim computes where it writes from
// the guess and lets its compare-and-swap on the tail check it: on x86 a
// record address computed from a load of the word that the previous
// claim's locked CAS wrote serialises the producer (W1 many-to-one at ~15
// Mmsg/s loading the tail, ~41 from a guess kept in another word;
// docs/ringbuf.md). A wrong guess (another producer, another process's
// view) costs one failed CAS and a load of the real tail in the caller's
// general path. The hint is written by producers on every claim, so it is
// on cache lines of its own.
type Producer struct {
	base      unsafe.Pointer // the ring's records
	mask      int64
	capacity  int
	tail      *atomic.Int64
	headCache *atomic.Int64

	_    [cacheLine]byte
	hint atomic.Int64
	_    [cacheLine]byte
}

// Init points p at a ring of capacity bytes of records at base, whose tail
// and head cache words are tail and headCache. The hint starts at the
// current tail.
func (p *Producer) Init(base unsafe.Pointer, capacity int, tail, headCache *atomic.Int64) {
	p.base, p.mask, p.capacity, p.tail, p.headCache = base, int64(capacity-1), capacity, tail, headCache
	p.hint.Store(tail.Load())
}

// Hint returns the tail guess, for the caller's general claim: it loads it
// as its first guess and stores the tail it claimed up to.
func (p *Producer) Hint() *atomic.Int64 { return &p.hint }

// Claim is the fast claim: one compare-and-swap attempt from the tail
// guess, when size (aligned) bytes fit before the end of the ring and the
// cached head says there is room. It returns the record index and the
// claimed tail; ok is false when the general claim must run (a wrap, a
// stale guess or head cache, a full ring, a misaligned tail). Small enough
// to inline.
func (p *Producer) Claim(size int) (index int, tail int64, ok bool) {
	tail = p.hint.Load()
	index = int(tail & p.mask)
	ok = tail&(Alignment-1) == 0 && size <= p.capacity-index &&
		int64(size) <= int64(p.capacity)-(tail-p.headCache.Load()) &&
		p.tail.CompareAndSwap(tail, tail+int64(size))
	return index, tail, ok
}

// Publish writes a record into the space Claim returned at index and
// stores next (the claimed tail plus size) as the new guess: one call,
// PublishRecord. marker is the record's header word with the negated
// record length (Marker); payload is at most MaxPayload bytes. Small
// enough to inline.
func (p *Producer) Publish(index int, marker int64, payload []byte, next int64) {
	PublishRecord(unsafe.Add(p.base, index), marker, payload, int32(len(payload)+HeaderLength), &p.hint, next)
}

// of returns the Producer of a *ringbuf.ManyToOne. Package ringbuf, which
// imports this one, sets it when it is initialised.
var of func(ring any) *Producer

// SetOf is for package ringbuf's init only.
func SetOf(f func(ring any) *Producer) { of = f }

// Of returns the Producer of ring, a *ringbuf.ManyToOne: its own, so that a
// layer's fast path and the ring's methods share one tail guess.
func Of(ring any) *Producer { return of(ring) }
