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
	bigs     [][]byte      // the buffers of the large messages in buf, in order
	free     [][]byte      // buffers of large messages handed out, for reuse
}

// bigMin is the size from which a message goes through the receive queue
// in a buffer of its own, copied once (queueRaw), rather than into the
// queue's buffer and again into the Message.
const bigMin = DefaultRefMin

// bigMark stands, in the queue's buffer, for the next large message of
// bigs: no frame on the wire starts with it (reserved flag bits).
var bigMark = [1]byte{0xff}

// maxFree bounds the buffers of large messages kept for reuse.
const maxFree = 4

// getBig returns a buffer of n bytes for a large message: one handed out
// before and given back, when one is large enough.
func (q *inQueue) getBig(n int) []byte {
	q.mu.Lock()
	for i := len(q.free) - 1; i >= 0; i-- {
		if b := q.free[i]; cap(b) >= n {
			q.free[i] = q.free[len(q.free)-1]
			q.free[len(q.free)-1] = nil
			q.free = q.free[:len(q.free)-1]
			q.mu.Unlock()
			return b[:n]
		}
	}
	q.mu.Unlock()
	return make([]byte, n)
}

// putBig keeps a large message's buffer, handed out and no longer used,
// for a later one.
func (q *inQueue) putBig(b []byte) {
	if cap(b) < bigMin {
		return
	}
	q.mu.Lock()
	if len(q.free) < maxFree {
		q.free = append(q.free, b[:0])
	}
	q.mu.Unlock()
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
// runs (a bigMark for each of bigs, in order), and gives back the rest
// of the reserved room.
func (q *inQueue) commit(runs [][]byte, msgs, reserved int, bigs ...[]byte) {
	q.mu.Lock()
	for _, r := range runs {
		q.buf = append(q.buf, r...)
	}
	q.bigs = append(q.bigs, bigs...)
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
// handed out. It returns spare and 0 when nothing is queued. The buffers
// of the large messages among them are in *bigs after the call, which
// hands in the caller's emptied list.
func (q *inQueue) take(spare []byte, bigs *[][]byte) ([]byte, int) {
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
		if len(q.bigs) > 0 {
			q.bigs, *bigs = (*bigs)[:0], q.bigs
		}
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

// next puts the next message of the buffer taken from the queue into m,
// and returns the bytes of the buffer it took: a large message's buffer
// becomes m's (no copy), and m's buffer of an earlier large message goes
// back to q for reuse; any other is copied (nextMessage).
func (rc *recvCache) next(m *slot, q *inQueue) {
	if rc.buf[rc.off] != bigMark[0] {
		rc.off += nextMessage(rc.buf[rc.off:], m)
		return
	}
	rc.off++
	b := rc.bigs[rc.bi]
	rc.bigs[rc.bi] = nil
	rc.bi++
	if rc.bi == len(rc.bigs) {
		rc.bigs, rc.bi = rc.bigs[:0], 0
	}
	q.putBig(m.data)
	m.data = b
	m.parts = m.parts[:0]
	for off := 0; off < len(b); {
		f := b[off]
		size, h := frameSize(b[off:])
		m.parts = append(m.parts, b[off+h:off+h+size:off+h+size])
		off += h + size
		if f&FlagMore == 0 {
			break
		}
	}
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
