package queue

import (
	"sync/atomic"

	"github.com/dutyrt/duty/internal/pad"
)

// OneToOne is a bounded single-producer, single-consumer queue of values of
// type T: Agrona's OneToOneConcurrentArrayQueue (FastFlow style), with
// head and tail indices instead of null slots as the publication. One
// goroutine at a time offers, one goroutine at a time polls or drains; the
// accessors may be called from anywhere. See the package documentation for
// the contract.
//
// Ordering. The producer writes the element into its slot (a plain store)
// and then publishes it with a release store of tail; the consumer's
// acquire is its atomic load of tail, so it reads a slot only below a tail
// it loaded. The consumer copies the element out, zeroes the slot (a plain
// store) and then releases it with a release store of head; the producer
// writes a slot again only after an atomic load of head shows it free, so
// the zeroing happens before the next write. Each side caches the other's
// index in a field only it touches and reloads it only when the cache says
// full (producer) or empty (consumer), so in the steady state neither reads
// the other's cache line per element.
type OneToOne[T any] struct {
	_ pad.Pair
	// Read-only after construction.
	buf  []T
	mask int64
	_    pad.Pair
	// Producer: tail (read by Size and the consumer), headCache (private).
	tail      atomic.Int64
	headCache int64
	_         pad.Pair
	// Consumer: head (read by Size and the producer), tailCache (private).
	head      atomic.Int64
	tailCache int64
	_         pad.Pair
}

// NewOneToOne returns an empty queue with room for capacity values, rounded
// up to a power of two. It returns an error wrapping ErrCapacity when
// capacity is below 1 or rounds above 1<<30, or when that many
// values of T do not fit in the address space.
func NewOneToOne[T any](capacity int) (*OneToOne[T], error) {
	c, err := roundCapacity(capacity, 1)
	if err != nil {
		return nil, err
	}
	buf, err := makeSlots[T](c, capacity)
	if err != nil {
		return nil, err
	}
	return &OneToOne[T]{buf: buf, mask: int64(c - 1)}, nil
}

// Offer adds v at the tail and reports true, or reports false, without
// allocating, when the queue is full. Producer only. The element is
// visible to the consumer when Offer returns true (it happens before the
// Poll or Drain that returns it).
func (q *OneToOne[T]) Offer(v T) bool {
	t := q.tail.Load()
	if t-q.headCache > q.mask {
		q.headCache = q.head.Load()
		if t-q.headCache > q.mask {
			return false
		}
	}
	q.buf[t&q.mask] = v
	storeRelease(&q.tail, t+1)
	return true
}

// available reports whether the consumer may read position h, reloading
// the tail cache only when it says empty.
func (q *OneToOne[T]) available(h int64) bool {
	if h < q.tailCache {
		return true
	}
	q.tailCache = q.tail.Load()
	return h < q.tailCache
}

// take removes the element at h (which must be available): it copies it
// out, zeroes the slot so the queue does not keep what it references alive,
// and releases the slot to the producer.
func (q *OneToOne[T]) take(h int64) T {
	p := &q.buf[h&q.mask]
	v := *p
	var zero T
	*p = zero
	storeRelease(&q.head, h+1)
	return v
}

// Poll removes and returns the value at the head, or returns the zero value
// and false when the queue is empty. Consumer only.
func (q *OneToOne[T]) Poll() (T, bool) {
	h := q.head.Load()
	if !q.available(h) {
		var zero T
		return zero, false
	}
	return q.take(h), true
}

// Drain removes up to limit values, in order, and calls fn with each; it
// returns how many it removed. Each value is removed (head released)
// before fn is called with it, so a panic in fn loses that value but no
// other, and fn may itself Poll or Drain this queue. A nil fn or a limit
// below 1 removes nothing. Consumer only.
func (q *OneToOne[T]) Drain(fn func(T), limit int) int {
	if fn == nil {
		return 0
	}
	n := 0
	for ; n < limit; n++ {
		h := q.head.Load() // again every time: fn may have polled
		if !q.available(h) {
			break
		}
		fn(q.take(h))
	}
	return n
}

// DrainTo removes up to limit values, in order, appends them to dst and
// returns the extended slice. It allocates only if dst lacks room.
// Consumer only.
func (q *OneToOne[T]) DrainTo(dst []T, limit int) []T {
	h := q.head.Load()
	for n := 0; n < limit && q.available(h); n++ {
		dst = append(dst, q.take(h))
		h++
	}
	return dst
}

// Size returns the number of values in the queue, in [0, Capacity()]: an
// estimate when producer or consumer run concurrently. Any goroutine.
func (q *OneToOne[T]) Size() int { return size(&q.head, &q.tail, q.mask+1) }

// Capacity returns the most values the queue holds (a power of two).
func (q *OneToOne[T]) Capacity() int { return len(q.buf) }

// isEmpty reports head >= tail: nothing to poll at the moment of the loads.
// Any goroutine.
func (q *OneToOne[T]) isEmpty() bool { return q.head.Load() >= q.tail.Load() }

// addedCount returns the number of values ever offered successfully (the
// tail). Any goroutine.
func (q *OneToOne[T]) addedCount() int64 { return q.tail.Load() }

// removedCount returns the number of values ever removed (the head). Any
// goroutine.
func (q *OneToOne[T]) removedCount() int64 { return q.head.Load() }
