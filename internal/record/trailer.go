package record

import (
	"sync/atomic"
	"unsafe"

	"github.com/dutyrt/duty/internal/atomicbuf"
)

// The ring layout, Agrona's RingBufferDescriptor (docs/agrona.md,
// "Layout"), bit for bit: a ring is Capacity bytes of records (a power of
// two) followed by a TrailerLength-byte trailer, each word alone in a
// 128-byte slot (two cache lines, so the adjacent-line prefetcher cannot
// cause false sharing). Offsets are relative to the end of the records:
//
//	capacity+0    padding
//	capacity+128  tail position       int64  producers
//	capacity+256  head cache position int64  producers
//	capacity+384  head position       int64  consumer
//	capacity+512  correlation counter int64  anyone (atomic add)
//	capacity+640  consumer heartbeat  int64  consumer (epoch ms)
//	capacity+768  end
//
// The one place these numbers are written: package ringbuf's rings and
// the mailbox lay their trailers out from them.
const (
	TrailerLength     = 768
	TailOffset        = 128
	HeadCacheOffset   = 256
	HeadOffset        = 384
	CorrelationOffset = 512
	HeartbeatOffset   = 640
)

// Trailer is the words of a ring's trailer.
type Trailer struct {
	Tail, HeadCache, Head, Correlation, Heartbeat *atomic.Int64
}

// TrailerOf returns the trailer words of the ring of capacity bytes of
// records in b (len(b) == capacity+TrailerLength, checked by the caller).
func TrailerOf(b atomicbuf.Buffer, capacity int) Trailer {
	return Trailer{
		Tail:        b.Int64At(capacity + TailOffset),
		HeadCache:   b.Int64At(capacity + HeadCacheOffset),
		Head:        b.Int64At(capacity + HeadOffset),
		Correlation: b.Int64At(capacity + CorrelationOffset),
		Heartbeat:   b.Int64At(capacity + HeartbeatOffset),
	}
}

// MaxMessageLength is the longest payload one record of a ring of
// capacity bytes carries: an eighth of the ring (Agrona's rule), at least
// 8 bytes, and 0 in a ring of its minimum capacity minCapacity.
func MaxMessageLength(capacity, minCapacity int) int {
	if capacity == minCapacity {
		return 0
	}
	return max(8, capacity/8)
}

// AllocateRing returns a zeroed buffer for a ring of capacity bytes of
// records (a power of two, checked by the caller): capacity+TrailerLength
// bytes starting on a 128-byte boundary, so that the records start on a
// cache line and each of the trailer's slots is a pair of lines of its own
// (the adjacent-line prefetcher of x86 CPUs fetches lines in such pairs).
func AllocateRing(capacity int) []byte {
	n := capacity + TrailerLength
	b := atomicbuf.Make(n + ringAlignment).Bytes()
	off := (ringAlignment - int(uintptr(unsafe.Pointer(unsafe.SliceData(b)))%ringAlignment)) % ringAlignment
	return b[off : off+n : off+n]
}

// ringAlignment is the alignment of AllocateRing's buffers.
const ringAlignment = 128
