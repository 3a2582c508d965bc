package zmtp

import (
	"context"
	"sync"
)

// A slot holds one queued message, copied: its bytes and its parts, which
// alias them. Both grow to the largest message the slot carried and are
// reused.
type slot struct {
	data  []byte
	parts [][]byte
}

func (s *slot) fill(parts [][]byte) {
	if len(parts) == 1 {
		// The common case, without the loops.
		p := parts[0]
		if cap(s.data) < len(p) {
			s.data = make([]byte, len(p))
		}
		s.data = s.data[:len(p)]
		copy(s.data, p)
		s.parts = append(s.parts[:0], s.data[:len(p):len(p)])
		return
	}
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	if cap(s.data) < n {
		s.data = make([]byte, n)
	}
	s.data = s.data[:n]
	s.parts = s.parts[:0]
	off := 0
	for _, p := range parts {
		copy(s.data[off:], p)
		s.parts = append(s.parts, s.data[off:off+len(p):off+len(p)])
		off += len(p)
	}
}

// A queue is a bounded FIFO of messages: a ring of hwm slots and a free
// list. A producer copies a message into a free slot; consumers take
// slots and give them back once done with the bytes (a writer after its
// vectored write, which referenced them). Two one-slot channels wake a
// waiting consumer or producer; whoever takes or frees a slot passes the
// wake-up on while work remains, so no waiter is forgotten.
type queue struct {
	mu       sync.Mutex
	ring     []*slot
	head, n  int
	free     []*slot
	notEmpty chan struct{}
	notFull  chan struct{}
}

func newQueue(hwm int) *queue {
	q := &queue{
		ring:     make([]*slot, hwm),
		free:     make([]*slot, hwm),
		notEmpty: make(chan struct{}, 1),
		notFull:  make(chan struct{}, 1),
	}
	slots := make([]slot, hwm)
	for i := range slots {
		q.free[i] = &slots[i]
	}
	return q
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// tryPut copies the message into the queue, or returns false when hwm
// messages are queued.
func (q *queue) tryPut(parts [][]byte) bool {
	q.mu.Lock()
	if len(q.free) == 0 {
		q.mu.Unlock()
		return false
	}
	s := q.free[len(q.free)-1]
	q.free = q.free[:len(q.free)-1]
	// Copying under the lock keeps the FIFO order of concurrent
	// producers equal to their order of entry.
	s.fill(parts)
	q.ring[q.index(q.n)] = s
	q.n++
	wasEmpty := q.n == 1
	q.mu.Unlock()
	// Only a consumer that found the queue empty waits: wake it at the
	// transition; the wake-up waits in the channel if it is not asleep yet.
	if wasEmpty {
		signal(q.notEmpty)
	}
	return true
}

// put is tryPut that waits for room until ctx ends.
func (q *queue) put(ctx context.Context, parts [][]byte) error {
	if q.tryPut(parts) {
		return nil
	}
	for !q.tryPut(parts) {
		select {
		case <-q.notFull:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	// This producer waited: pass the wake-up on to the next waiting one
	// while room is left.
	q.passNotFull()
	return nil
}

// passNotFull wakes a producer waiting for room if room is left.
func (q *queue) passNotFull() {
	q.mu.Lock()
	room := len(q.free) > 0
	q.mu.Unlock()
	if room {
		signal(q.notFull)
	}
}

// reserve waits until a slot is free or ctx ends, then moves up to max
// free slots to dst for the caller to fill outside the lock. The caller
// hands them back with commit, the filled ones queued in order: a reader
// queues all the messages one read brought with two locks, not two per
// message. Reserved slots count against the high-water mark.
func (q *queue) reserve(ctx context.Context, dst []*slot, max int) ([]*slot, error) {
	for {
		q.mu.Lock()
		n := min(max, len(q.free))
		if n > 0 {
			dst = append(dst, q.free[len(q.free)-n:]...)
			clear(q.free[len(q.free)-n:])
			q.free = q.free[:len(q.free)-n]
			room := len(q.free) > 0
			q.mu.Unlock()
			if room {
				// Another producer may wait for room: pass the wake-up on.
				signal(q.notFull)
			}
			return dst, nil
		}
		q.mu.Unlock()
		select {
		case <-q.notFull:
		case <-ctx.Done():
			return dst, ctx.Err()
		}
	}
}

// commit queues the filled slots, in order, and gives the unused ones of
// a reserve back to the free list.
func (q *queue) commit(filled, unused []*slot) {
	q.mu.Lock()
	wasEmpty := q.n == 0
	for _, s := range filled {
		q.ring[q.index(q.n)] = s
		q.n++
	}
	wasFull := len(q.free) == 0
	q.free = append(q.free, unused...)
	q.mu.Unlock()
	clear(filled)
	clear(unused)
	if wasEmpty && len(filled) > 0 {
		signal(q.notEmpty)
	}
	if wasFull && len(unused) > 0 {
		signal(q.notFull)
	}
}

// take appends up to max queued slots to dst, oldest first, without
// waiting. The caller gives them back with release.
func (q *queue) take(dst []*slot, max int) []*slot {
	q.mu.Lock()
	n := min(max, q.n)
	// At most two runs of the ring: head to its end, then from its start.
	first := min(n, len(q.ring)-q.head)
	dst = append(dst, q.ring[q.head:q.head+first]...)
	clear(q.ring[q.head : q.head+first])
	dst = append(dst, q.ring[:n-first]...)
	clear(q.ring[:n-first])
	q.head = q.index(n)
	q.n -= n
	more := q.n > 0
	q.mu.Unlock()
	if more {
		signal(q.notEmpty)
	}
	return dst
}

// index returns the ring index i places after head.
func (q *queue) index(i int) int {
	// A compare instead of a division: the ring's length need not be a
	// power of two.
	j := q.head + i
	if j >= len(q.ring) {
		j -= len(q.ring)
	}
	return j
}

// release gives slots back to the free list.
func (q *queue) release(slots []*slot) {
	if len(slots) == 0 {
		return
	}
	q.mu.Lock()
	wasFull := len(q.free) == 0
	q.free = append(q.free, slots...)
	q.mu.Unlock()
	clear(slots)
	if wasFull {
		signal(q.notFull)
	}
}

// drop empties the queue and returns how many messages it held.
func (q *queue) drop() int {
	q.mu.Lock()
	n := q.n
	for ; q.n > 0; q.n-- {
		q.free = append(q.free, q.ring[q.head])
		q.ring[q.head] = nil
		q.head = q.index(1)
	}
	q.mu.Unlock()
	return n
}

// length returns the number of queued messages.
func (q *queue) length() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.n
}
