package queue

import (
	"sync/atomic"

	"github.com/dutyrt/duty/internal/pad"
)

// ManyToMany is a bounded multi-producer, multi-consumer queue of values of
// type T: Agrona's ManyToManyConcurrentArrayQueue, Dmitry Vyukov's bounded
// MPMC queue with a sequence word per slot. Any number of goroutines offer
// and poll; every method may be called from anywhere. See the package
// documentation for the contract.
//
// Ordering. Slot i starts with sequence i. A producer that reads tail t
// and finds the slot's sequence equal to t (the slot is free for lap
// t/capacity) claims t with a CAS of tail, writes the element, and
// publishes it with a release store of sequence t+1. A consumer that reads
// head h and finds sequence h+1 (its acquire: the atomic load of the
// word) claims h with a CAS of head, copies the element out, zeroes the
// slot, and frees it for the next lap with a release store of sequence
// h+capacity, which is the acquire a producer of position h+capacity
// waits for. The CAS decides which of several producers (consumers) owns a
// position; the sequence word alone carries the data between them.
//
// A sequence below the expected one means full (Offer) or empty (Poll):
// the slot still holds an element of the previous lap, or its element is
// not published yet. As in Agrona neither waits: Offer may report full
// while a consumer is between its CAS and its release, and Poll may report
// empty while a producer is between its CAS and its publication.
type ManyToMany[T any] struct {
	_ pad.Pair
	// Read-only after construction.
	buf  []slot[T]
	mask int64
	_    pad.Pair
	// Producers.
	tail atomic.Int64
	_    pad.Pair
	// Consumers.
	head atomic.Int64
	_    pad.Pair
}

// NewManyToMany returns an empty queue with room for capacity values,
// rounded up to a power of two. It returns an error wrapping ErrCapacity
// when capacity is below 2 (with one slot, a free slot and a published
// one carry the same sequence) or rounds above 1<<30, or when that
// many slots do not fit in the address space.
func NewManyToMany[T any](capacity int) (*ManyToMany[T], error) {
	c, err := roundCapacity(capacity, 2)
	if err != nil {
		return nil, err
	}
	buf, err := makeSlots[slot[T]](c, capacity)
	if err != nil {
		return nil, err
	}
	q := &ManyToMany[T]{buf: buf, mask: int64(c - 1)}
	for i := range q.buf {
		q.buf[i].seq.Store(int64(i))
	}
	return q, nil
}

// Offer adds v at the tail and reports true, or reports false, without
// allocating, when the queue is full. Any goroutine. The element is
// visible to consumers when Offer returns true; offers of one goroutine
// are claimed in the order it made them.
func (q *ManyToMany[T]) Offer(v T) bool {
	t := q.tail.Load()
	for {
		s := &q.buf[t&q.mask]
		seq := s.seq.Load()
		if seq < t {
			return false
		}
		if seq == t && q.tail.CompareAndSwap(t, t+1) {
			s.v = v
			storeRelease(&s.seq, t+1)
			return true
		}
		// Another producer took t: try the tail it left.
		t = q.tail.Load()
	}
}

// Poll removes and returns the value at the head, or returns the zero value
// and false when none is published there: the queue is empty, or the
// producer of the head position has not finished its Offer. Any goroutine.
func (q *ManyToMany[T]) Poll() (T, bool) {
	h := q.head.Load()
	for {
		s := &q.buf[h&q.mask]
		seq := s.seq.Load()
		if seq < h+1 {
			var zero T
			return zero, false
		}
		if seq == h+1 && q.head.CompareAndSwap(h, h+1) {
			v := s.v
			var zero T
			s.v = zero
			storeRelease(&s.seq, h+q.mask+1)
			return v, true
		}
		// Another consumer took h: try the head it left.
		h = q.head.Load()
	}
}

// Drain polls up to limit values and calls fn with each; it returns how
// many it removed. Each value is removed before fn is called with it, so a
// panic in fn loses that value but no other. With other consumers polling
// at the same time, the values one Drain gets need not be consecutive. A
// nil fn or a limit below 1 removes nothing. Any goroutine.
func (q *ManyToMany[T]) Drain(fn func(T), limit int) int {
	if fn == nil {
		return 0
	}
	n := 0
	for ; n < limit; n++ {
		v, ok := q.Poll()
		if !ok {
			break
		}
		fn(v)
	}
	return n
}

// DrainTo polls up to limit values, appends them to dst and returns the
// extended slice. It allocates only if dst lacks room. Any goroutine.
func (q *ManyToMany[T]) DrainTo(dst []T, limit int) []T {
	for n := 0; n < limit; n++ {
		v, ok := q.Poll()
		if !ok {
			break
		}
		dst = append(dst, v)
	}
	return dst
}

// Size returns the number of positions claimed by producers and not yet
// claimed by consumers, in [0, Capacity()]. Any goroutine.
func (q *ManyToMany[T]) Size() int { return size(&q.head, &q.tail, q.mask+1) }

// Capacity returns the most values the queue holds (a power of two, at
// least 2).
func (q *ManyToMany[T]) Capacity() int { return len(q.buf) }

// isEmpty reports head >= tail. Any goroutine.
func (q *ManyToMany[T]) isEmpty() bool { return q.head.Load() >= q.tail.Load() }

// addedCount returns the number of positions ever claimed by Offer (the
// tail), including offers still in progress. Any goroutine.
func (q *ManyToMany[T]) addedCount() int64 { return q.tail.Load() }

// removedCount returns the number of positions ever claimed by Poll (the
// head), including polls still in progress. Any goroutine.
func (q *ManyToMany[T]) removedCount() int64 { return q.head.Load() }
