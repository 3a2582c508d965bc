package zmtp

import (
	"encoding/binary"
	"runtime"
	"sync"
)

// An outQueue holds the messages a sending socket accepted and no writer
// has written yet, already encoded: their frames back to back in one
// buffer. Send copies a message once, into the buffer; a writer takes the
// buffer whole in exchange for an empty one and writes it with one system
// call, so that a burst of small messages costs one copy each and one
// write in all. Messages taken and not yet written still count against
// the high-water mark: hwm bounds all the socket holds.
type outQueue struct {
	// The lock and what it guards sit on cache lines of their own: the
	// senders take it per message, and a line shared with another
	// goroutine's data would move between cores on every one.
	_        [64]byte
	mu       sync.Mutex
	buf      []byte // frames of the queued messages
	n        int    // messages in buf
	flight   int    // messages taken by writers, not yet written
	hwm      int
	claimed  bool          // a sender writes a message itself (putOrClaim)
	lastTry  int64         // when a send last found the queue idle (sinceEpoch)
	skip     int           // idle sends to queue before the next look at the clock
	notEmpty chan struct{} // a writer may wait on it
	notFull  chan struct{} // a SendContext may wait on it
	_        [64]byte
}

// maxSpare is the largest buffer a writer keeps for the next exchange;
// a larger one, grown by a burst of large messages, is let go.
const maxSpare = 1 << 20

func newOutQueue(hwm int) *outQueue {
	return &outQueue{hwm: hwm, notEmpty: make(chan struct{}, 1), notFull: make(chan struct{}, 1)}
}

// tryPut encodes the message into the buffer, or returns false when hwm
// messages are held.
func (q *outQueue) tryPut(parts [][]byte) bool {
	q.mu.Lock()
	if q.n+q.flight >= q.hwm {
		q.mu.Unlock()
		return false
	}
	// Encoding under the lock keeps the order of concurrent senders equal
	// to their order of entry, and a message's frames together.
	q.buf = appendMessage(q.buf, parts)
	q.n++
	wasEmpty := q.n == 1 && !q.claimed // claimDone wakes the writer then
	q.mu.Unlock()
	// Only a writer that found the queue empty waits: wake it at the
	// transition; the wake-up waits in the channel if it is not asleep.
	if wasEmpty {
		signal(q.notEmpty)
	}
	return true
}

// putOrClaim queues the message as tryPut does (queued), or, when
// mayClaim and nothing is queued or in flight and the sends are not a
// stream (or the message is large), claims it for the caller to write
// itself (claimed): it counts
// in flight, and take hands out nothing until claimDone, so that the
// messages queued meanwhile follow it. Neither when hwm messages are held.
//
// Sends closer together than inlineGap are a stream: queued, so that the
// writer batches, rather than a system call each. Once a stream is seen,
// the next inlineSkip sends that find the queue idle are queued without
// reading the clock (slow on some virtual machines), and the last of them
// starts the next measure.
func (q *outQueue) putOrClaim(parts [][]byte, mayClaim, large bool) (queued, claimed bool) {
	q.mu.Lock()
	if mayClaim && q.n == 0 && q.flight == 0 && q.hwm > 0 {
		if large {
			// Written by reference, worth a system call of its own.
			q.flight++
			q.claimed = true
			q.mu.Unlock()
			return false, true
		}
		if q.skip > 0 {
			if q.skip--; q.skip == 0 {
				q.lastTry = sinceEpoch()
			}
		} else {
			now := sinceEpoch()
			streaming := now-q.lastTry < inlineGap
			q.lastTry = now
			if streaming {
				q.skip = inlineSkip
			} else {
				q.flight++
				q.claimed = true
				q.mu.Unlock()
				return false, true
			}
		}
	}
	if q.n+q.flight >= q.hwm {
		q.mu.Unlock()
		return false, false
	}
	q.buf = appendMessage(q.buf, parts)
	q.n++
	wasEmpty := q.n == 1 && !q.claimed
	q.mu.Unlock()
	if wasEmpty {
		signal(q.notEmpty)
	}
	return true, false
}

// claimDone ends the flight of a claimed message and wakes a writer for
// the messages queued behind it.
func (q *outQueue) claimDone() {
	q.mu.Lock()
	wasFull := q.n+q.flight >= q.hwm
	q.flight--
	q.claimed = false
	more := q.n > 0
	q.mu.Unlock()
	if more {
		signal(q.notEmpty)
	}
	if wasFull {
		signal(q.notFull)
	}
}

// take returns the queued frames and their message count, and leaves
// spare, emptied, in their place. The caller writes them and then calls
// written.
func (q *outQueue) take(spare []byte) ([]byte, int) {
	q.mu.Lock()
	if q.n == 0 || q.claimed {
		q.mu.Unlock()
		return spare, 0
	}
	b, n := q.buf, q.n
	q.buf, q.n = spare[:0], 0
	q.flight += n
	q.mu.Unlock()
	return b, n
}

// next ends the flight of done messages taken before and written, as
// written does, and takes the queued ones, as take does, under one lock,
// taken as lockGently does: the writer's turn once per batch.
func (q *outQueue) next(spare []byte, done int) ([]byte, int) {
	q.lockGently()
	wasFull := q.n+q.flight >= q.hwm
	q.flight -= done
	var b []byte
	n := 0
	if q.n > 0 && !q.claimed {
		b, n = q.buf, q.n
		q.buf, q.n = spare[:0], 0
		q.flight += n
	} else {
		b = spare
	}
	q.mu.Unlock()
	if wasFull && done > 0 {
		signal(q.notFull)
	}
	return b, n
}

// lockGently takes the lock for a writer without queueing on it while
// it can: with every processor busy a sync.Mutex does not spin, and a
// writer asleep on it would make each sender's unlock wake it and each
// lock take the slow path. A writer that fails to get it yields its
// processor instead, a few times, then waits.
func (q *outQueue) lockGently() {
	for i := 0; !q.mu.TryLock(); i++ {
		if i == 8 {
			q.mu.Lock()
			return
		}
		runtime.Gosched()
	}
}

// written ends the flight of n messages taken (written or lost) and wakes
// a sender waiting for room.
func (q *outQueue) written(n int) {
	q.mu.Lock()
	wasFull := q.n+q.flight >= q.hwm
	q.flight -= n
	q.mu.Unlock()
	if wasFull {
		signal(q.notFull)
	}
}

// passNotFull wakes a sender waiting for room if room is left.
func (q *outQueue) passNotFull() {
	q.mu.Lock()
	room := q.n+q.flight < q.hwm
	q.mu.Unlock()
	if room {
		signal(q.notFull)
	}
}

// drop discards the queued messages and returns how many there were.
func (q *outQueue) drop() int {
	q.mu.Lock()
	n := q.n
	q.buf, q.n = q.buf[:0], 0
	q.mu.Unlock()
	return n
}

// length returns the number of messages held: queued or being written.
func (q *outQueue) length() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.n + q.flight
}

// signal wakes the goroutine waiting on c, or leaves the wake-up in c
// for the next one that waits.
func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// appendMessage appends a message's frames to b, bodies copied, as
// Encoder.Message encodes them: every part but the last with MORE, no
// parts as one empty frame.
func appendMessage(b []byte, parts [][]byte) []byte {
	if len(parts) == 1 && len(parts[0]) <= maxShort {
		// The common small message: one short frame.
		p := parts[0]
		return append(append(b, 0, byte(len(p))), p...)
	}
	if len(parts) == 0 {
		return append(b, 0, 0)
	}
	last := len(parts) - 1
	for i, p := range parts {
		var f byte
		if i < last {
			f = FlagMore
		}
		if len(p) > maxShort {
			b = append(b, f|FlagLong)
			b = binary.BigEndian.AppendUint64(b, uint64(len(p)))
		} else {
			b = append(b, f, byte(len(p)))
		}
		b = append(b, p...)
	}
	return b
}
