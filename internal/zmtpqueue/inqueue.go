package zmtpqueue

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/dutyrt/duty/internal/zmtpwire"
)

// An In holds the messages readers received for Recv, as they came
// off the wire and were checked by the decoder: their frames back to back
// in one buffer. A reader appends what one read brought with one copy and
// one lock; Recv takes the buffer whole in exchange for the one it
// emptied, and hands out its messages one at a time without the queue's
// lock. The high-water mark bounds the messages queued plus those Recv
// took and has not handed out yet; readers wait beyond it.
type In struct {
	mu       sync.Mutex
	buf      []byte       // frames of the queued messages
	n        int          // messages in buf
	Avail    atomic.Int32 // n, for a look without the lock
	held     int          // messages of the buffer Recv took last
	reserved int          // messages readers reserved room for
	hwm      int
	NotEmpty chan struct{} // Recv waits on it
	NotFull  chan struct{} // readers wait on it
	bigs     [][]byte      // the buffers of the large messages in buf, in order
	free     [][]byte      // buffers of large messages handed out, for reuse
}

// BigMin is the size from which a message goes through the receive queue
// in a buffer of its own, copied once, rather than into the queue's
// buffer and again into the receiver's message.
const BigMin = zmtpwire.DefaultRefMin

// BigMark stands, in the queue's buffer, for the next large message of
// the buffers Commit was given: no frame on the wire starts with it
// (reserved flag bits).
const BigMark = 0xff

// maxFree bounds the buffers of large messages kept for reuse.
const maxFree = 4

// GetBig returns a buffer of n bytes for a large message: one handed out
// before and given back, when one is large enough.
func (q *In) GetBig(n int) []byte {
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

// PutBig keeps a large message's buffer, handed out and no longer used,
// for a later one.
func (q *In) PutBig(b []byte) {
	if cap(b) < BigMin {
		return
	}
	q.mu.Lock()
	if len(q.free) < maxFree {
		q.free = append(q.free, b[:0])
	}
	q.mu.Unlock()
}

// NewIn returns a receive queue that holds hwm messages.
func NewIn(hwm int) *In {
	return &In{hwm: hwm, NotEmpty: make(chan struct{}, 1), NotFull: make(chan struct{}, 1)}
}

func (q *In) room() int { return q.hwm - q.n - q.held - q.reserved }

// Reserve waits until there is room for a message or ctx ends, and
// reserves room for up to max messages; the reader appends them with
// Commit.
func (q *In) Reserve(ctx context.Context, max int) (int, error) {
	for {
		q.mu.Lock()
		if k := min(max, q.room()); k > 0 {
			q.reserved += k
			more := q.room() > 0
			q.mu.Unlock()
			if more {
				// Another reader may wait for room: pass the wake-up on.
				Signal(q.NotFull)
			}
			return k, nil
		}
		q.mu.Unlock()
		select {
		case <-q.NotFull:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}

// Commit appends msgs messages, whose frames are the concatenation of
// runs (a BigMark for each of bigs, in order), and gives back the rest
// of the reserved room.
func (q *In) Commit(runs [][]byte, msgs, reserved int, bigs ...[]byte) {
	q.mu.Lock()
	for _, r := range runs {
		q.buf = append(q.buf, r...)
	}
	q.bigs = append(q.bigs, bigs...)
	wasEmpty := q.n == 0
	q.n += msgs
	q.Avail.Store(int32(q.n))
	q.reserved -= reserved
	// Room given back may be what another reader waits for.
	freed := reserved > msgs && q.room() > 0
	q.mu.Unlock()
	if wasEmpty && msgs > 0 {
		Signal(q.NotEmpty)
	}
	if freed {
		Signal(q.NotFull)
	}
}

// Take returns the queued frames and their message count, leaving spare,
// emptied, in their place; the messages of the previous Take count as
// handed out. It returns spare and 0 when nothing is queued. The buffers
// of the large messages among them are in *bigs after the call, which
// hands in the caller's emptied list.
func (q *In) Take(spare []byte, bigs *[][]byte) ([]byte, int) {
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
		q.Avail.Store(0)
		if len(q.bigs) > 0 {
			q.bigs, *bigs = (*bigs)[:0], q.bigs
		}
	}
	freed = freed && q.room() > 0
	q.mu.Unlock()
	if freed {
		// The messages handed out made room a reader may wait for.
		Signal(q.NotFull)
	}
	return b, n
}
