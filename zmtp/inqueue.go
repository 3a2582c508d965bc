package zmtp

import (
	"context"
	"encoding/binary"
	"sync"
	"sync/atomic"
)

// An inQueue holds the messages readers received for Recv, as they came
// off the wire and were checked by the decoder: their frames back to back
// in one buffer. A reader appends what one read brought with one copy and
// one lock; Recv takes the buffer whole in exchange for the one it
// emptied, and hands out its messages one at a time without the queue's
// lock. The high-water mark bounds the messages queued plus those Recv
// took and has not handed out yet; readers wait beyond it.
type inQueue struct {
	mu       sync.Mutex
	buf      []byte       // frames of the queued messages
	n        int          // messages in buf
	avail    atomic.Int32 // n, for a look without the lock
	held     int          // messages of the buffer Recv took last
	reserved int          // messages readers reserved room for
	hwm      int
	notEmpty chan struct{} // Recv waits on it
	notFull  chan struct{} // readers wait on it
}

func newInQueue(hwm int) *inQueue {
	return &inQueue{hwm: hwm, notEmpty: make(chan struct{}, 1), notFull: make(chan struct{}, 1)}
}

func (q *inQueue) room() int { return q.hwm - q.n - q.held - q.reserved }

// reserve waits until there is room for a message or ctx ends, and
// reserves room for up to max messages; the reader appends them with
// commit.
func (q *inQueue) reserve(ctx context.Context, max int) (int, error) {
	for {
		q.mu.Lock()
		if k := min(max, q.room()); k > 0 {
			q.reserved += k
			more := q.room() > 0
			q.mu.Unlock()
			if more {
				// Another reader may wait for room: pass the wake-up on.
				signal(q.notFull)
			}
			return k, nil
		}
		q.mu.Unlock()
		select {
		case <-q.notFull:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}

// commit appends msgs messages, whose frames are the concatenation of
// runs, and gives back the rest of the reserved room.
func (q *inQueue) commit(runs [][]byte, msgs, reserved int) {
	q.mu.Lock()
	for _, r := range runs {
		q.buf = append(q.buf, r...)
	}
	wasEmpty := q.n == 0
	q.n += msgs
	q.avail.Store(int32(q.n))
	q.reserved -= reserved
	// Room given back may be what another reader waits for.
	freed := reserved > msgs && q.room() > 0
	q.mu.Unlock()
	if wasEmpty && msgs > 0 {
		signal(q.notEmpty)
	}
	if freed {
		signal(q.notFull)
	}
}

// take returns the queued frames and their message count, leaving spare,
// emptied, in their place; the messages of the previous take count as
// handed out. It returns spare and 0 when nothing is queued.
func (q *inQueue) take(spare []byte) ([]byte, int) {
	q.mu.Lock()
	freed := q.held > 0
	b, n := q.buf, q.n
	q.held = n
	if n == 0 {
		b = spare
	} else {
		if cap(spare) > maxSpare {
			// Grown by a burst of large messages: let it go.
			spare = nil
		}
		q.buf, q.n = spare[:0], 0
		q.avail.Store(0)
	}
	freed = freed && q.room() > 0
	q.mu.Unlock()
	if freed {
		// The messages handed out made room a reader may wait for.
		signal(q.notFull)
	}
	return b, n
}

// A slot holds a received message, copied: its bytes and its parts, which
// alias them. Both grow to the largest message it carried and are reused.
type slot struct {
	data  []byte
	parts [][]byte
}

// nextMessage parses the message at the start of b, frames the decoder
// checked (no command, sizes within b), into m's buffers: parts copied
// into m's data. It returns the bytes the message took.
func nextMessage(b []byte, m *slot) int {
	if b[0] == 0 {
		// One short frame: the common small message.
		size := int(b[1])
		if cap(m.data) < size {
			m.data = make([]byte, size)
		}
		m.data = m.data[:size]
		copy(m.data, b[shortHeader:])
		m.parts = append(m.parts[:0], m.data[:size:size])
		return shortHeader + size
	}
	// First pass: the body bytes, to size m's buffer once.
	total, off := 0, 0
	for {
		f := b[off]
		size, h := frameSize(b[off:])
		total += size
		off += h + size
		if f&FlagMore == 0 {
			break
		}
	}
	if cap(m.data) < total {
		m.data = make([]byte, total)
	}
	m.data = m.data[:total]
	m.parts = m.parts[:0]
	d, off := 0, 0
	for {
		f := b[off]
		size, h := frameSize(b[off:])
		copy(m.data[d:], b[off+h:off+h+size])
		m.parts = append(m.parts, m.data[d:d+size:d+size])
		d += size
		off += h + size
		if f&FlagMore == 0 {
			return off
		}
	}
}

// frameSize returns a frame's body size and header length.
func frameSize(b []byte) (size, header int) {
	if b[0]&FlagLong != 0 {
		return int(binary.BigEndian.Uint64(b[1:])), longHeader
	}
	return int(b[1]), shortHeader
}
