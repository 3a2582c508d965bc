// Package zmtpqueue holds package zmtp's queues: the lock-free send queue
// (Out), whose ring holds the messages as the frames a writer writes, and
// the receive queue (In) that readers fill for Recv (docs/zmtp.md, "Why
// it is built this way").
package zmtpqueue

import (
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dutyrt/duty/internal/atomicbuf"
	"github.com/dutyrt/duty/internal/zmtpwire"
)

// An Out holds the messages a sending socket accepted and no writer
// has written yet. It is a many-to-one ring of bytes that are the wire
// itself: each message's ZMTP frames, back to back, so that a writer
// writes a batch straight from the ring with one system call, no copy on
// its side. Beside the ring, a commit slot per message says that the
// message's bytes are written (and how many there are), the way a record
// header does in the record core's rings, but out of the byte stream.
//
//   - The tail counts messages as well as bytes, in one word, so that a
//     sender checks the high-water mark and claims its bytes and its
//     message number with one compare-and-swap: no lock, and no line a
//     writer stores to on every message. hwm bounds all the socket holds:
//     messages in the ring, taken and not yet written, and written by
//     their senders themselves (PutOrClaim).
//   - Any number of writers (one per peer of a PUSH or DEALER socket)
//     take turns with a mutex, once per batch: a writer takes the
//     committed messages at the head, writes them, and then releases
//     their bytes; batches written out of order are released in order.
//
// A message larger than inlineMax frame bytes, or one for which the ring
// has no room, is encoded into a ref slot of its own; its commit slot
// holds the slot's index, and the writer writes the slot's bytes by
// reference between the ring's (writev). It takes no ring bytes, so the
// ring never refuses a message that hwm admits. There are as many commit
// slots as the high-water mark rounded up to a power of two: a sender
// claims message number m only while fewer than hwm are held, so m's slot
// was taken by a writer a lap ago.
//
// Memory ordering. A sender's compare-and-swap of the tail orders its
// claim; it writes its frames and its slot's value with plain stores and
// publishes them with a release store of the slot's tag (kind and message
// number: atomicbuf.StoreRelease64); a writer's atomic load of the tag it
// expects acquires them. A writer stores head (sequentially consistent)
// after the system call that read the bytes it releases: a sender that
// loads head before its claim writes over written bytes only. The
// written count is an atomic add after the write. A sender loads the tail
// before written and head, so those may have moved past what its tail
// word counts (writers took and wrote what other senders claimed since):
// it takes that tail word as stale and loads it again, never as a full
// queue or a full ring.
//
// Waking. A writer that found nothing to take waits on NotEmpty, after
// announcing itself in Sleepers and looking at the tail once more; a
// sender loads Sleepers after its compare-and-swap and signals when it is
// not zero. Both the announcement and the compare-and-swap are read-
// modify-write operations, sequentially consistent in Go on every
// architecture, so one of the two sides sees the other (Dekker): no
// wake-up is lost, and a sender of a stream that the writer keeps up with
// signals nothing. The same handshake, with Waiters and written, wakes a
// SendContext waiting for room.
type Out struct {
	_ [64]byte
	// The senders' line: the tail, and the stream detector (PutOrClaim).
	tail    atomic.Uint64 // messages<<posBits | bytes, both wrapping
	lastTry atomic.Int64  // when a send last found the queue idle (sinceEpoch)
	skip    atomic.Int32  // idle sends to queue before the next look at the clock
	_       [64]byte
	// The writers' line: what they have released, taken and written,
	// loaded by every send and stored once per batch.
	head    atomic.Uint64 // ring bytes released (wrapping as the tail's)
	taken   atomic.Uint64 // messages taken, as the tail counts them
	written atomic.Uint64 // messages written or lost (wrapping as the tail's)
	_       [64]byte
	// The handshakes' line: stored only by goroutines about to wait.
	Sleepers atomic.Int32 // writers about to wait on NotEmpty, or waiting
	Waiters  atomic.Int32 // senders about to wait on NotFull, or waiting
	_        [64]byte

	ring  []byte // the frames; a power of two
	mask  int
	slots []commitSlot
	smask uint64
	hwm   int

	rmu        sync.Mutex // one writer takes or releases at a time
	takenPos   uint64     // the ring bytes taken
	flights    []flight   // batches taken and not yet released, in order
	flightBase uint64     // the number of flights[0]

	refMu   sync.Mutex
	refs    []*refSlot
	refFree []int32

	NotEmpty chan struct{} // a writer may wait on it
	NotFull  chan struct{} // a SendContext may wait on it
}

// A commitSlot says that message number tag&msgMask is written: its kind
// (tag>>32: frames or ref) and val (frames: their bytes in the
// ring; ref: the ref slot's index).
type commitSlot struct {
	tag atomic.Int64
	val int64
}

// Kinds of message in a commit slot's tag.
const (
	kindFrames = 1 // val frame bytes in the ring
	kindRef    = 2 // in ref slot val
)

// A flight is a batch taken and not yet released: the ring bytes up to
// end, and whether its writer is done with them.
type flight struct {
	end  uint64
	done bool
}

// A refSlot holds the frames of one message that is not in the ring.
type refSlot struct{ buf []byte }

// The tail's packing: bytes in the low posBits, messages in the msgBits
// above (head and takenPos count bytes, taken and written messages, with
// the same wrapping). The top bit is set while a sender writes a message
// itself (claimBit): one at a time, as a claim needs nothing else held.
const (
	posBits  = 40
	posMask  = 1<<posBits - 1
	msgBits  = 23
	msgMask  = 1<<msgBits - 1
	claimBit = 1 << 63
)

const (
	// inlineMax is the largest message (its frames) the ring holds.
	inlineMax = 4 << 10
	// ringPerMsg is the ring's bytes per message of the high-water mark:
	// room for hwm small messages.
	ringPerMsg = 64
	minRing    = 64 << 10
	// takeMax bounds the bytes of one batch (a write).
	takeMax = 256 << 10
)

// MaxHWM is the largest high-water mark: a larger one is MaxHWM. A send
// queue's ring takes 64 bytes, and its commit slots 16 bytes, per message
// of the high-water mark.
const MaxHWM = 1 << 20

// maxSpare is the largest buffer a ref slot keeps for the next message;
// a larger one, grown by a large message, is let go. refKeep is how many
// free slots keep theirs.
const (
	maxSpare = 1 << 20
	refKeep  = 8
)

// NewOut returns a send queue that holds hwm messages (1 to MaxHWM; a
// value outside is brought within).
func NewOut(hwm int) *Out {
	hwm = min(max(hwm, 1), MaxHWM)
	size := max(minRing, 1<<bits.Len(uint(hwm*ringPerMsg-1)))
	slots := 1 << bits.Len(uint(hwm-1))
	return &Out{
		ring:     make([]byte, size),
		mask:     size - 1,
		slots:    make([]commitSlot, slots),
		smask:    uint64(slots - 1),
		hwm:      hwm,
		NotEmpty: make(chan struct{}, 1),
		NotFull:  make(chan struct{}, 1),
	}
}

// nextTail returns the tail word t with its message count and bytes moved
// on to msgs and pos, its claim kept.
func nextTail(t, msgs, pos uint64) uint64 {
	return t&claimBit | (msgs&msgMask)<<posBits | pos&posMask
}

// msgsOf returns the messages a tail word counts (wrapping).
func msgsOf(t uint64) uint64 { return t >> posBits & msgMask }

// held returns the messages a tail word counts that are not written yet,
// the claimed one included; negative when t is stale: written, loaded
// after it, has passed what it counts (then the tail has moved on, and a
// compare-and-swap against t fails).
func (q *Out) held(t uint64) int {
	d := (msgsOf(t) - q.written.Load()) & msgMask
	if d > msgMask/2 {
		return -1
	}
	return int(d) + int(t>>63)
}

// Count returns the messages held: queued, being written, or written by
// their senders.
func (q *Out) Count() int {
	for {
		if n := q.held(q.tail.Load()); n >= 0 {
			return n
		}
	}
}

// TryPut queues the message, or returns false when hwm messages are held.
func (q *Out) TryPut(parts [][]byte) bool {
	queued, _ := q.PutOrClaim(parts, false, false)
	return queued
}

// PutOrClaim queues the message (queued), or, when mayClaim and nothing
// is queued or in flight and the sends are not a stream (or the message
// is large), claims it for the caller to write itself (claimed): it
// counts in flight until ClaimDone. Neither when hwm messages are held.
// A claim orders the caller's message after its own earlier ones (they
// are written, or something would be held) and before its later ones
// (the caller writes it before it sends again); messages of other
// goroutines queued meanwhile may pass it, as they could have entered
// first.
//
// Sends closer together than inlineGap are a stream: queued, so that the
// writer batches, rather than a system call each. Once a stream is seen,
// the next inlineSkip sends that find the queue idle are queued without
// reading the clock (slow on some virtual machines), and the last of them
// starts the next measure.
func (q *Out) PutOrClaim(parts [][]byte, mayClaim, large bool) (queued, claimed bool) {
	size := zmtpwire.FramesLen(parts)
	var ref int32 = -1 // the message's ref slot, once encoded there
	decided := false   // the stream detector has been asked
	for {
		t := q.tail.Load()
		held := q.held(t)
		if held < 0 {
			continue // t is stale
		}
		if held >= q.hwm {
			q.unref(ref)
			return false, false
		}
		m, pos := msgsOf(t), t&posMask
		if mayClaim && held == 0 {
			if !decided {
				decided = true
				mayClaim = large || !q.streaming()
			}
			if mayClaim {
				if q.tail.CompareAndSwap(t, t|claimBit) {
					q.unref(ref)
					return false, true
				}
				continue
			}
		}
		used := (pos - q.head.Load()) & posMask
		if used > posMask/2 {
			continue // t is stale: the writers released bytes past it
		}
		kind, val := int64(kindFrames), int64(size)
		next := pos + uint64(size)
		if size > inlineMax || int(used)+size > len(q.ring) {
			if ref < 0 {
				// Encoded before the claim, so that a writer never
				// waits for a large copy.
				ref = q.refSlot(parts)
				continue
			}
			kind, val, next = kindRef, int64(ref), pos
		}
		if !q.tail.CompareAndSwap(t, nextTail(t, m+1, next)) {
			continue
		}
		if kind != kindRef {
			q.unref(ref) // encoded, and room came back meanwhile
		}
		if kind == kindFrames {
			q.putFrames(int(pos)&q.mask, parts, size)
		}
		s := &q.slots[m&q.smask]
		s.val = val
		atomicbuf.StoreRelease64(&s.tag, kind<<32|int64(m&msgMask))
		// After the compare-and-swap (a full barrier): a writer that
		// announced itself before it either saw the claim or is woken.
		if q.Sleepers.Load() != 0 {
			Signal(q.NotEmpty)
		}
		return true, false
	}
}

// putFrames encodes the message's frames (size bytes) into the ring at
// index i, across the ring's end if need be.
func (q *Out) putFrames(i int, parts [][]byte, size int) {
	if i+size <= len(q.ring) {
		zmtpwire.AppendMessage(q.ring[i:i:i+size], parts)
		return
	}
	q.putFramesWrapped(i, parts)
}

// putFramesWrapped is putFrames across the ring's end: encoded aside,
// then copied in two pieces (the ring holds inlineMax frame bytes at most
// per message).
func (q *Out) putFramesWrapped(i int, parts [][]byte) {
	var tmp [inlineMax]byte
	b := zmtpwire.AppendMessage(tmp[:0], parts)
	k := copy(q.ring[i:], b)
	copy(q.ring, b[k:])
}

// streaming reports whether this send, which found the queue idle, came
// within inlineGap of the previous such send (see PutOrClaim). Senders
// racing here may both read or both skip the clock: it is a heuristic.
func (q *Out) streaming() bool {
	if q.skip.Load() > 0 {
		if q.skip.Add(-1) == 0 {
			q.lastTry.Store(sinceEpoch())
		}
		return true
	}
	now := sinceEpoch()
	streaming := now-q.lastTry.Load() < inlineGap
	q.lastTry.Store(now)
	if streaming {
		q.skip.Store(inlineSkip)
	}
	return streaming
}

// refSlot encodes the message into a free ref slot and returns its index.
func (q *Out) refSlot(parts [][]byte) int32 {
	q.refMu.Lock()
	var i int32
	if k := len(q.refFree); k > 0 {
		i = q.refFree[k-1]
		q.refFree = q.refFree[:k-1]
	} else {
		i = int32(len(q.refs))
		q.refs = append(q.refs, &refSlot{})
	}
	s := q.refs[i]
	q.refMu.Unlock()
	// The slot is this sender's until its message is committed, then the
	// taking writer's until it frees it.
	s.buf = zmtpwire.AppendMessage(s.buf[:0], parts)
	return i
}

// unref frees ref slot i, if i is one (not negative).
func (q *Out) unref(i int32) {
	if i >= 0 {
		q.freeRefs([]int32{i})
	}
}

// freeRefs returns ref slots to the free list. The first refKeep free
// slots keep their buffers (up to maxSpare bytes each) for the next large
// messages; the others let theirs go, so that a burst of large messages
// leaves no more than that behind.
func (q *Out) freeRefs(slots []int32) {
	q.refMu.Lock()
	for _, i := range slots {
		if cap(q.refs[i].buf) > maxSpare || len(q.refFree) >= refKeep {
			q.refs[i].buf = nil
		}
		q.refFree = append(q.refFree, i)
	}
	q.refMu.Unlock()
}

// ClaimDone ends the flight of a claimed message.
func (q *Out) ClaimDone() {
	q.tail.And(^uint64(claimBit))
	// After the and (a full barrier), as release does.
	if q.Waiters.Load() != 0 {
		Signal(q.NotFull)
	}
}

// release counts n messages taken as written (or lost) and wakes a
// sender waiting for room.
func (q *Out) release(n int) {
	if n == 0 {
		return
	}
	q.written.Add(uint64(n))
	// After the add (a full barrier): a sender that announced itself
	// before it either saw the room or is woken.
	if q.Waiters.Load() != 0 {
		Signal(q.NotFull)
	}
}

// A Batch is what a writer took from the queue: ring bytes, with the
// ref slots to write between them.
type Batch struct {
	from, to uint64   // the ring bytes, as the tail counts them
	cuts     []uint64 // where in the ring bytes each ref slot's bytes go
	refs     []int32  // the ref slots, in order
	vec      [][]byte // what to write, in order (Vector)
	flight   uint64   // the number of the batch's flight
	n        int      // messages
}

// Take takes the committed messages at the head of the queue into b (its
// previous content is dropped) and returns how many (b.n): to be written
// (Vector), then released (Done). Zero when none is committed.
func (q *Out) Take(b *Batch) int {
	b.cuts, b.refs, b.n = b.cuts[:0], b.refs[:0], 0
	q.rmu.Lock()
	m, pos := q.taken.Load(), q.takenPos
	b.from = pos
	for int((pos-b.from)&posMask) < takeMax {
		s := &q.slots[m&q.smask]
		tag := s.tag.Load()
		if uint64(uint32(tag)) != m || tag>>32 == 0 {
			break // not committed yet
		}
		if tag>>32 == kindFrames {
			pos = (pos + uint64(s.val)) & posMask
		} else {
			b.cuts = append(b.cuts, pos)
			b.refs = append(b.refs, int32(s.val))
		}
		m = (m + 1) & msgMask
		b.n++
	}
	if b.n == 0 {
		q.rmu.Unlock()
		return 0
	}
	b.to = pos
	q.takenPos = pos
	q.taken.Store(m)
	b.flight = q.flightBase + uint64(len(q.flights))
	q.flights = append(q.flights, flight{end: pos})
	q.rmu.Unlock()
	return b.n
}

// Ready reports whether the message k after the next to take is
// committed (k = 0: the next). It reads the writers' line and a commit
// slot, never the senders' tail: a writer polls with it.
func (q *Out) Ready(k uint64) bool {
	m := (q.taken.Load() + k) & msgMask
	tag := q.slots[m&q.smask].tag.Load()
	return uint64(uint32(tag)) == m && tag>>32 != 0
}

// HoldOff waits, while the senders stream densely, for a batch worth its
// system call: until holdAhead messages (half hwm at most) are committed,
// the senders pause (the tail did not move over holdCheck polls), or
// holdPolls polls have passed, yielding the processor between polls. A
// writer that wrote a batch calls it before it takes the next, and it
// waits only when holdDense messages came during that write: a stream's
// batches grow from a few messages per system call to holdAhead, where the
// system call's fixed cost stops mattering, while a sparser stream, and
// the first message after a pause, are never held. The polls read a commit slot
// that many messages ahead, which the senders write only when they get
// there, and the tail only every holdCheck polls: a sender pays no cache
// miss per poll.
func (q *Out) HoldOff() {
	ahead := uint64(min(holdAhead, q.hwm/2))
	if ahead <= holdDense || !q.Ready(holdDense) {
		return // not a dense stream: no wait
	}
	last := msgsOf(q.tail.Load())
	for i := 1; i <= holdPolls && !q.Ready(ahead); i++ {
		runtime.Gosched()
		if i%holdCheck == 0 {
			t := msgsOf(q.tail.Load())
			if t == last {
				return
			}
			last = t
		}
	}
}

// The writer's hold-off (HoldOff).
const (
	holdDense = 16
	holdAhead = 1024
	holdPolls = 64
	holdCheck = 8
)

// Pending reports whether messages are claimed that no writer has taken:
// committed, or about to be.
func (q *Out) Pending() bool {
	return msgsOf(q.tail.Load()) != q.taken.Load()
}

// Vector returns what b holds to write, in order: ring bytes (in up to
// two pieces where they cross the ring's end) between the ref slots'.
func (q *Out) Vector(b *Batch) [][]byte {
	b.vec = b.vec[:0]
	from := b.from
	if len(b.refs) > 0 {
		q.refMu.Lock()
		for k, i := range b.refs {
			b.vec = q.appendRing(b.vec, from, b.cuts[k])
			from = b.cuts[k]
			b.vec = append(b.vec, q.refs[i].buf)
		}
		q.refMu.Unlock()
	}
	b.vec = q.appendRing(b.vec, from, b.to)
	return b.vec
}

// appendRing appends the ring's bytes from from to to (positions as the
// tail counts them) to v: none, one slice, or two across the ring's end.
func (q *Out) appendRing(v [][]byte, from, to uint64) [][]byte {
	n := int((to - from) & posMask)
	if n == 0 {
		return v
	}
	i := int(from) & q.mask
	if i+n <= len(q.ring) {
		return append(v, q.ring[i:i+n])
	}
	return append(v, q.ring[i:], q.ring[:i+n-len(q.ring)])
}

// Done releases what b took, written or lost: its ring bytes once every
// batch taken before it is released too, its ref slots, and its messages.
func (q *Out) Done(b *Batch) {
	if len(b.refs) > 0 {
		q.freeRefs(b.refs)
	}
	clear(b.vec) // drop the references into the ring and the slots
	q.rmu.Lock()
	q.flights[b.flight-q.flightBase].done = true
	k := 0
	for k < len(q.flights) && q.flights[k].done {
		k++
	}
	if k > 0 {
		// After the system call that read them: a sender that loads
		// this head writes over written bytes only.
		q.head.Store(q.flights[k-1].end)
		q.flights = q.flights[:copy(q.flights, q.flights[k:])]
		q.flightBase += uint64(k)
	}
	q.rmu.Unlock()
	q.release(b.n)
}

// HasRoom reports whether fewer than hwm messages are held.
func (q *Out) HasRoom() bool { return q.Count() < q.hwm }

// PassNotFull wakes another sender waiting for room if room is left.
func (q *Out) PassNotFull() {
	if q.Waiters.Load() != 0 && q.HasRoom() {
		Signal(q.NotFull)
	}
}

// Drop discards the committed messages no writer has taken and returns
// how many there were.
func (q *Out) Drop() int {
	var b Batch
	n := 0
	for q.Take(&b) > 0 {
		n += b.n
		q.Done(&b)
	}
	return n
}

// Signal wakes the goroutine waiting on c, or leaves the wake-up in c
// for the next one that waits.
func Signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// inlineGap is the least time between two sends that find the send queue
// idle for the second to be written inline: the sends of a request-reply
// exchange are further apart, those of a stream closer.
const inlineGap = int64(2 * time.Microsecond)

// inlineSkip is how many sends queue without a look at the clock once a
// stream is seen.
const inlineSkip = 64

var epoch = time.Now()

// sinceEpoch reads the monotonic clock.
func sinceEpoch() int64 { return int64(time.Since(epoch)) }
