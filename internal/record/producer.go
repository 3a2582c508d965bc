package record

import (
	"sync/atomic"
	"unsafe"

	"github.com/dutyrt/duty/internal/pad"
)

// MaxPayload is the largest payload the fast path writes: up to it the copy
// is a few vector moves in line (CopyBlocks, CopyShort).
const MaxPayload = 64

// Producer is one view's producer side of a ring of records: where the
// records are, the most one record carries, the words producers share
// (tail, head cache, head: in a ringbuf ring's trailer), and a guess of the
// tail. Its methods are the many-to-one producer protocol (claim.go,
// complete.go, batch.go, unblock.go; docs/ringbuf.md, "Producing" and
// "Unblock"): package ringbuf's ManyToOne produces through it, and so does
// the mailbox, with a Producer of its own over its ring. A one-to-one ring
// (many false) claims space its own way (package ringbuf) and uses the
// rest: the checks, the marker and the completions.
//
// The guess (the hint) is the tail this view's producers last claimed up
// to, never ahead of the real tail. A claim computes where it writes from
// the guess and lets its compare-and-swap on the tail check it: on x86 a
// record address computed from a load of the word that the previous
// claim's locked CAS wrote serialises the producer (docs/ringbuf.md, "Fast
// paths"). A wrong guess (another producer, another view of the ring, in
// this process or another) costs one failed CAS and a load of the real
// tail, never a wrong claim. The hint is written by producers on every
// claim, so it is on cache lines of its own; the fields before it are
// written once, by Init.
type Producer struct {
	Log
	maxMsgLength int
	tail         *atomic.Int64
	headCache    *atomic.Int64
	head         *atomic.Int64
	// many: any number of producers, and a consumer that may pad an open
	// claim (Unblock): a claim of several records is published with a
	// compare-and-swap (PublishClaim).
	many bool

	_    pad.Line
	hint atomic.Int64
	_    pad.Line
}

// Init points p at records, the records of a ring whose tail, head cache
// and head positions are the words tail, headCache and head, whose records
// carry at most maxMsgLength payload bytes; many for a many-to-one ring.
// The hint starts at the current tail. Init writes nothing to the ring.
func (p *Producer) Init(records []byte, tail, headCache, head *atomic.Int64, maxMsgLength int, many bool) {
	p.Log = NewLog(records)
	p.maxMsgLength, p.tail, p.headCache, p.head, p.many = maxMsgLength, tail, headCache, head, many
	p.hint.Store(tail.Load())
}

// MaxMessageLength returns the longest payload one record carries.
func (p *Producer) MaxMessageLength() int { return p.maxMsgLength }

// Tail, HeadCache and Head return the ring's position words.
func (p *Producer) Tail() *atomic.Int64      { return p.tail }
func (p *Producer) HeadCache() *atomic.Int64 { return p.headCache }
func (p *Producer) Head() *atomic.Int64      { return p.head }

// Hint returns the tail guess.
func (p *Producer) Hint() *atomic.Int64 { return &p.hint }

// ClaimFast is the fast claim: one compare-and-swap attempt from the tail
// guess, when size (aligned) bytes fit before the end of the ring and the
// cached head says there is room. It returns the record index and the
// claimed tail; ok is false when the general claim (Claim) must run (a
// wrap, a stale guess or head cache, a full ring, a misaligned tail).
// Small enough to inline.
func (p *Producer) ClaimFast(size int) (index int, tail int64, ok bool) {
	tail = p.hint.Load()
	index = int(tail & p.mask)
	ok = tail&(Alignment-1) == 0 && size <= p.capacity-index &&
		int64(size) <= int64(p.capacity)-(tail-p.headCache.Load()) &&
		p.tail.CompareAndSwap(tail, tail+int64(size))
	return index, tail, ok
}

// AbortFast gives up the space ClaimFast returned at index, of size
// (aligned) bytes, as a padding record the consumer skips, and stores
// next as the new guess: for a producer that learns after its claim that
// it must not publish (a mailbox closed meanwhile).
func (p *Producer) AbortFast(index, size int, next int64) {
	PublishRecord(unsafe.Add(p.base, index), Marker(size-HeaderLength, PaddingTypeID), nil, int32(size), &p.hint, next)
}

// PublishFast writes a record into the space ClaimFast returned at index
// and stores next (the claimed tail plus size) as the new guess: one call,
// PublishRecord. marker is the record's header word with the negated
// record length (Marker); payload is at most MaxPayload bytes. Small
// enough to inline.
func (p *Producer) PublishFast(index int, marker int64, payload []byte, next int64) {
	PublishRecord(unsafe.Add(p.base, index), marker, payload, int32(len(payload)+HeaderLength), &p.hint, next)
}
