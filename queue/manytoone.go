package queue

import (
	"sync/atomic"

	"github.com/dutyrt/duty/internal/pad"
)

// ManyToOne is a bounded multi-producer, single-consumer queue of values of
// type T: Agrona's ManyToOneConcurrentArrayQueue. Any number of goroutines
// offer; one goroutine at a time polls or drains; the accessors may be
// called from anywhere. See the package documentation for the contract.
//
// Ordering. A producer claims position t with a CAS of tail (after
// checking room against a head cache shared by producers, reloaded from
// head only when it says full), then writes the element into the slot and
// publishes it with a release store of the slot's sequence word, t+1. The
// consumer's acquire is its atomic load of that word: it takes the element
// at head h only when the word equals h+1 (a stale word from an earlier
// lap holds h+1-capacity or 0). It never reads tail. It copies the element
// out, zeroes the slot, and releases the slot with a store of head;
// a producer claims t+capacity only after a load of head shows h+1, so the
// zeroing happens before the next write.
//
// Because the claim and the publication are two steps, Poll may report
// empty while Size() > 0 or isEmpty() is false: a producer between its CAS
// and its publication. The consumer does not wait for it; a later Poll
// returns the element. Elements are delivered in claim order, so a stalled
// producer holds back the elements claimed after its own.
type ManyToOne[T any] struct {
	_ pad.Pair
	// Read-only after construction.
	buf  []slot[T]
	mask int64
	_    pad.Pair
	// Producers: tail and the head cache they share.
	tail      atomic.Int64
	headCache atomic.Int64
	_         pad.Pair
	// Consumer: head.
	head atomic.Int64
	_    pad.Pair
}

// NewManyToOne returns an empty queue with room for capacity values,
// rounded up to a power of two. It returns an error wrapping ErrCapacity
// when capacity is below 1 or rounds above 1<<30, or when that many
// slots do not fit in the address space.
func NewManyToOne[T any](capacity int) (*ManyToOne[T], error) {
	c, err := roundCapacity(capacity, 1)
	if err != nil {
		return nil, err
	}
	buf, err := makeSlots[slot[T]](c, capacity)
	if err != nil {
		return nil, err
	}
	return &ManyToOne[T]{buf: buf, mask: int64(c - 1)}, nil
}

// Offer adds v at the tail and reports true, or reports false, without
// allocating, when the queue is full. Any goroutine. The element is
// visible to the consumer when Offer returns true; offers of one goroutine
// are delivered in the order it made them.
func (q *ManyToOne[T]) Offer(v T) bool {
	headCache := q.headCache.Load()
	for {
		t := q.tail.Load()
		if t-headCache > q.mask {
			h := q.head.Load()
			if t-h > q.mask {
				return false
			}
			headCache = h
			// Producers may store older heads over newer ones: a stale
			// cache only costs another reload, never an overrun.
			storeRelease(&q.headCache, h)
		}
		if q.tail.CompareAndSwap(t, t+1) {
			s := &q.buf[t&q.mask]
			s.v = v
			storeRelease(&s.seq, t+1)
			return true
		}
	}
}

// takeAt removes the element at head h if it is published.
func (q *ManyToOne[T]) takeAt(h int64) (T, bool) {
	s := &q.buf[h&q.mask]
	var zero T
	if s.seq.Load() != h+1 {
		return zero, false
	}
	v := s.v
	s.v = zero
	// A sequentially consistent store, not storeRelease, on purpose: the
	// release store is cheaper per element on one goroutine, but it made
	// the spinning 1P1C and 2P1C throughput benchmarks slower on amd64:
	// the XCHG slows a consumer that would otherwise keep catching up with
	// the producers and contend for the slot line they are writing
	// (docs/queue.md, "Costs").
	q.head.Store(h + 1)
	return v, true
}

// Poll removes and returns the value at the head, or returns the zero value
// and false when it is not published yet: the queue is empty, or the
// producer that claimed the head position has not finished its Offer.
// Consumer only.
func (q *ManyToOne[T]) Poll() (T, bool) { return q.takeAt(q.head.Load()) }

// Drain removes up to limit values, in order, and calls fn with each; it
// returns how many it removed. It stops at the first position not yet
// published. Each value is removed (head released) before fn is called
// with it, so a panic in fn loses that value but no other, and fn may
// itself Poll or Drain this queue. A nil fn or a limit below 1 removes
// nothing. Consumer only.
func (q *ManyToOne[T]) Drain(fn func(T), limit int) int {
	if fn == nil {
		return 0
	}
	n := 0
	for ; n < limit; n++ {
		v, ok := q.takeAt(q.head.Load()) // head again every time: fn may have polled
		if !ok {
			break
		}
		fn(v)
	}
	return n
}

// DrainTo removes up to limit values, in order, appends them to dst and
// returns the extended slice. It allocates only if dst lacks room.
// Consumer only.
func (q *ManyToOne[T]) DrainTo(dst []T, limit int) []T {
	h := q.head.Load()
	for n := 0; n < limit; n++ {
		v, ok := q.takeAt(h)
		if !ok {
			break
		}
		dst = append(dst, v)
		h++
	}
	return dst
}

// Size returns the number of positions claimed by producers and not yet
// removed, in [0, Capacity()]; it counts offers still in progress. Any
// goroutine.
func (q *ManyToOne[T]) Size() int { return size(&q.head, &q.tail, q.mask+1) }

// Capacity returns the most values the queue holds (a power of two).
func (q *ManyToOne[T]) Capacity() int { return len(q.buf) }

// isEmpty reports head >= tail. False does not promise that Poll succeeds
// (an offer may be in progress). Any goroutine.
func (q *ManyToOne[T]) isEmpty() bool { return q.head.Load() >= q.tail.Load() }

// addedCount returns the number of positions ever claimed by Offer (the
// tail), including offers still in progress. Any goroutine.
func (q *ManyToOne[T]) addedCount() int64 { return q.tail.Load() }

// removedCount returns the number of values ever removed (the head). Any
// goroutine.
func (q *ManyToOne[T]) removedCount() int64 { return q.head.Load() }
