package ringbuf

import (
	"fmt"
	"math"
	"sync/atomic"
	"unsafe"

	"github.com/dutyrt/duty/internal/atomicbuf"
	"github.com/dutyrt/duty/internal/prefetch"
	"github.com/dutyrt/duty/internal/record"
)

// NoLimit is a message-count limit that reads everything available.
const NoLimit = math.MaxInt

// Handler receives one message from Read. payload aliases the ring: it is
// valid only until the handler returns and must not be retained or modified.
type Handler func(typeID int32, payload []byte)

// ControlledHandler receives one message from ControlledRead and decides
// what happens to it (see Action). payload aliases the ring as for Handler.
type ControlledHandler func(typeID int32, payload []byte) Action

// Action is a ControlledHandler's decision about the message it was given
// (the record core's type: the read loop acts on it).
type Action = record.Action

const (
	// Abort leaves this message in the ring, un-consumed, and ends the read;
	// it is delivered again by the next read. Messages accepted earlier in
	// the same read stay consumed.
	Abort Action = record.Abort
	// Break consumes this message and ends the read.
	Break Action = record.Break
	// Commit consumes this message, releases the space of everything read so
	// far to the producers at once, and continues.
	Commit Action = record.Commit
	// Continue consumes this message and continues; space is released at the
	// end of the read.
	Continue Action = record.Continue
)

// Claim is space claimed in the ring by TryClaim. Fill Payload, then pass
// Index to exactly one of Commit or Abort.
type Claim struct {
	// Index is the offset of the payload in the ring's buffer: the record's
	// offset plus HeaderLength, never below HeaderLength.
	Index int
	// Payload is the claimed space, aliasing the ring.
	Payload []byte
}

// RecordSize returns the space a record with a payload of length bytes
// takes in a ring: header plus payload, rounded up to 8 bytes. Sum it
// over the records of a batch to size TryClaimBatch.
func RecordSize(length int) int { return record.Size(length) }

// Allocate returns a zeroed buffer for a ring of the given capacity (a
// power of two): capacity + TrailerLength bytes, starting on a 128-byte
// boundary, so that the records start on a cache line and each of the
// trailer's 128-byte slots is a pair of lines of its own (the adjacent-line
// prefetcher of x86 CPUs fetches lines in such pairs).
func Allocate(capacity int) ([]byte, error) {
	if capacity <= 0 || capacity&(capacity-1) != 0 || capacity > math.MaxInt32 {
		return nil, fmt.Errorf("%w: capacity=%d", ErrCapacity, capacity)
	}
	return record.AllocateRing(capacity), nil
}

// ring is the state and code shared by both ring types. All fields are
// written once by the constructor and only read afterwards, so producer and
// consumer goroutines share its cache lines read-only; the hot shared words
// live in the buffer's trailer, each in its own 128-byte slot. The two
// sides are the record core's (internal/record): p, the producer side (the
// many-to-one protocol, and the checks, marker and completions a
// one-to-one producer shares; its tail guess on cache lines of its own),
// and rd, the consumer (the read loops; its one consumer-written word on
// cache lines of its own).
type ring struct {
	buf atomicbuf.Buffer
	// claimLimit is the most one claim may take: the capacity, less on a
	// one-to-one ring the header its producer zeroes after every claim.
	claimLimit int
	// many: a many-to-one ring (WriteBatch's claim).
	many bool
	// prefetchBlocks masks away a position's offset in its
	// prefetch.BlockSize block, or is 0 in a ring too small to prefetch in
	// (record.PrefetchBlocks; see prefetchAhead).
	prefetchBlocks int64
	// base is the records' first byte (r.p's) and blockMask the ring's
	// mask and prefetchBlocks together (a position's block's index), for
	// prefetchAhead, which must stay small enough to inline into the
	// one-to-one Write.
	base        unsafe.Pointer
	blockMask   int64
	correlation *atomic.Int64
	heartbeat   *atomic.Int64

	p  record.Producer
	rd record.Reader
}

// init points r at the ring buffer b: a many-to-one ring (many) or a
// one-to-one ring. It writes nothing to b.
func (r *ring) init(b []byte, many bool) error {
	// A one-to-one producer reserves the header after each claim (it
	// zeroes it), so one claim gets at most the capacity less a header.
	minCapacity, reserve := minCapacityOneToOne, HeaderLength
	if many {
		minCapacity, reserve = minCapacityManyToOne, 0
	}
	capacity := len(b) - TrailerLength
	if capacity <= 0 || capacity&(capacity-1) != 0 || capacity > math.MaxInt32 {
		return fmt.Errorf("%w: length=%d, want a positive power of 2 + TrailerLength", ErrCapacity, len(b))
	}
	if capacity < minCapacity {
		return fmt.Errorf("%w: insufficient capacity: minCapacity=%d, length=%d", ErrCapacity, minCapacity+TrailerLength, len(b))
	}
	ab, err := atomicbuf.New(b)
	if err != nil {
		return fmt.Errorf("%w: buffer not 8-byte aligned: %w", ErrCapacity, err)
	}
	*r = ring{
		buf:            ab,
		claimLimit:     capacity - reserve,
		many:           many,
		prefetchBlocks: record.PrefetchBlocks(capacity),
		base:           unsafe.Pointer(unsafe.SliceData(b)),
		blockMask:      int64(capacity-1) & record.PrefetchBlocks(capacity),
		correlation:    ab.Int64At(capacity + correlationCounterOffset),
		heartbeat:      ab.Int64At(capacity + consumerHeartbeatOffset),
	}
	records := b[:capacity:capacity]
	head := ab.Int64At(capacity + headPositionOffset)
	r.p.Init(records, ab.Int64At(capacity+tailPositionOffset), ab.Int64At(capacity+headCachePositionOffset), head,
		record.MaxMessageLength(capacity, minCapacity), many)
	r.rd.Init(records, head, many)
	return nil
}

// prefetchDistance is how far ahead of its tail a one-to-one producer asks
// for the ring's lines (docs/ringbuf.md, "Prefetching"; the consumer's
// distance is the record core's).
const prefetchDistance = record.PrefetchDistance

// prefetchClaim is prefetchAhead for a claim of any size, called under the
// same condition: it asks for every block that enters the window as the tail
// moves from tail to next (a batch can cross several).
func (r *ring) prefetchClaim(tail, next int64) {
	first, last := prefetchWindow(tail, next)
	for b := first; b <= last; b += prefetch.BlockSize {
		prefetch.Write(unsafe.Add(r.base, b&r.blockMask))
	}
}

// prefetchWindow returns the positions of the first and the last block that
// start in (tail+prefetchDistance, next+prefetchDistance]: the blocks a
// producer moving from tail to next asks for (none when first > last).
// prefetchAhead is the case of a move that crosses one boundary.
func prefetchWindow(tail, next int64) (first, last int64) {
	first = ((tail + prefetchDistance) | (prefetch.BlockSize - 1)) + 1
	last = (next + prefetchDistance) &^ (prefetch.BlockSize - 1)
	return first, last
}

// prefetchAhead is called by a producer whose tail moves to next across a
// block boundary, that is when (tail^next)&r.prefetchBlocks != 0 (in line
// at the call site, to keep the common case free of the call). It asks for
// the prefetch.BlockSize block prefetchDistance bytes beyond next in a state
// this core can write, so that the first store into each of its lines, a
// lap later, does not wait for the consumer's core to give the line up.
// A hint only: those lines may hold records the consumer has not read yet,
// which a prefetch neither changes nor orders.
func (r *ring) prefetchAhead(next int64) {
	prefetch.Write(unsafe.Add(r.base, (next+prefetchDistance)&r.blockMask))
}

// Capacity returns the capacity of the ring in bytes (the buffer's length
// less the trailer).
func (r *ring) Capacity() int { return r.p.Capacity() }

// MaxMessageLength returns the longest payload a single record can carry.
func (r *ring) MaxMessageLength() int { return r.p.MaxMessageLength() }

// Buffer returns the whole underlying buffer, trailer included.
func (r *ring) Buffer() []byte { return r.buf.Bytes() }

// ProducerPosition returns the tail position: bytes claimed since creation.
func (r *ring) ProducerPosition() int64 { return r.p.Tail().Load() }

// ConsumerPosition returns the head position: bytes consumed since creation.
func (r *ring) ConsumerPosition() int64 { return r.p.Head().Load() }

// Size returns the number of bytes between head and tail, clamped to
// [0, Capacity]: headers, padding and open claims included. It is an
// indication only: producers and the consumer move on as it is computed.
func (r *ring) Size() int {
	head, tail := r.p.Head(), r.p.Tail()
	h1 := head.Load()
	for {
		t := tail.Load()
		h2 := head.Load()
		if h1 == h2 {
			return int(min(max(t-h2, 0), int64(r.p.Capacity())))
		}
		h1 = h2
	}
}

// NextCorrelationID atomically increments the ring's correlation counter and
// returns its previous value (0 on a fresh ring). Any goroutine or process
// sharing the ring may call it.
func (r *ring) NextCorrelationID() int64 { return r.correlation.Add(1) - 1 }

// ConsumerHeartbeatTime returns the time the consumer last recorded with
// SetConsumerHeartbeatTime.
func (r *ring) ConsumerHeartbeatTime() int64 { return r.heartbeat.Load() }

// SetConsumerHeartbeatTime records the consumer's heartbeat. Use an epoch
// time (milliseconds since the Unix epoch, as Aeron does): it is compared
// across processes, so never a per-process monotonic clock.
func (r *ring) SetConsumerHeartbeatTime(epochMillis int64) {
	atomicbuf.StoreRelease64(r.heartbeat, epochMillis)
}

// Read delivers up to limit committed messages to h, in order, and releases
// their space when it returns (a many-to-one ring zeroes it first). Padding
// is consumed but neither delivered nor counted, and a read never crosses
// the end of the ring, so it can return 0 while messages wait at its
// start: call it again (or use Size). A handler that panics consumes its
// message, as in Agrona: the panic propagates, and the next read releases
// its space. A handler may read from the same ring: the inner read
// consumes the handler's message and what it reads.
func (r *ring) Read(h Handler, limit int) (int, error) {
	if h == nil {
		return 0, ErrNilHandler
	}
	if !r.rd.Ready() {
		return 0, nil
	}
	return r.rd.Read(h, limit)
}

// ControlledRead is Read with a handler that decides, message by message,
// with an Action.
func (r *ring) ControlledRead(h ControlledHandler, limit int) (int, error) {
	if h == nil {
		return 0, ErrNilHandler
	}
	if !r.rd.Ready() {
		return 0, nil
	}
	return r.rd.ControlledRead(h, limit)
}

// Ready reports whether a read now would find a committed record at the
// consumer's position: a message, padding to skip, or a record to report
// as corrupt. An empty ring or an open claim at head, even a dead
// producer's, is not ready, so a consumer that spins on Ready must still
// call Unblock now and then if producers can die. Consumer only. Ready
// inlines and Read does not: a spinning consumer polls with Ready and
// calls Read when it is true, so that an empty poll makes no call, which
// would delay the loop's exit when a message arrives (docs/ringbuf.md,
// "Spinning consumers").
func (r *ring) Ready() bool { return r.rd.Ready() }
