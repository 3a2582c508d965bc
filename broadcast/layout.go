package broadcast

import "math"

// Byte layout of a broadcast buffer: Agrona's BroadcastBufferDescriptor and
// RecordDescriptor, bit for bit (docs/agrona.md, "Broadcast"), so that a Java
// process using Agrona's classes can share the buffer. This file is the
// single source of these numbers; layout_test.go asserts them against raw
// bytes written by a Transmitter.
//
//	+--------------------------------+ 0
//	| ring: capacity bytes           |   capacity is a power of two >= minCapacity
//	|   records, 8-byte aligned      |
//	+--------------------------------+ capacity
//	| trailer: trailerLength bytes   |
//	|   +0   int64 tail intent       |
//	|   +8   int64 tail              |
//	|   +16  int64 latest            |
//	+--------------------------------+ capacity + 128
//
// A record is
//
//	+0  int32 length   total record length including the header, unaligned
//	+4  int32 type     >= 1 for messages, paddingTypeID for padding
//	+8  payload        length - headerLength bytes
//
// and the next record starts at align(length, recordAlignment). All words are
// little-endian (native byte order on every platform duty supports).
const (
	// trailerLength is the size of the trailer that follows the ring.
	trailerLength = 128
	// tailIntentCounterOffset is the trailer offset of the int64 position the
	// transmitter is about to write up to. It is stored before a record's
	// bytes are written.
	tailIntentCounterOffset = 0
	// tailCounterOffset is the trailer offset of the int64 position up to
	// which records are complete. It is stored after a record's bytes.
	tailCounterOffset = 8
	// latestCounterOffset is the trailer offset of the int64 start position of
	// the most recently completed record.
	latestCounterOffset = 16

	// headerLength is the size of a record header.
	headerLength = 8
	// lengthOffset is the offset of the int32 record length in a header.
	lengthOffset = 0
	// typeOffset is the offset of the int32 type id in a header.
	typeOffset = 4
	// recordAlignment is the alignment of every record in the ring.
	recordAlignment = 8
	// paddingTypeID is the type id of the padding record that fills the end of
	// the ring when a message does not fit there contiguously.
	paddingTypeID = -1

	// minCapacity is the smallest ring capacity accepted. Agrona accepts any
	// power of two, but below 16 bytes a maximum-length record (capacity/8
	// payload bytes plus the header, aligned) no longer fits in the ring.
	minCapacity = 16
	// maxCapacity is the largest ring capacity accepted, as in Agrona, whose
	// capacities and record lengths are 32-bit ints.
	maxCapacity = 1 << 30

	// maxPosition bounds the positions a receiver accepts from the trailer, so
	// that position arithmetic (position + capacity) can never overflow. A
	// real transmitter needs 146 years at 1 GB/s to reach it.
	maxPosition = math.MaxInt64 >> 1
)

// maxMsgLength returns the largest payload, in bytes, a buffer with a ring of
// capacity bytes carries: capacity/8, as in Agrona.
func maxMsgLength(capacity int) int { return capacity / 8 }

// align rounds n up to a multiple of recordAlignment.
func align(n int64) int64 { return (n + recordAlignment - 1) &^ (recordAlignment - 1) }

// checkCapacity returns the ring capacity of a buffer of total bytes, or
// ErrCapacity.
func checkCapacity(total int) (int, error) {
	capacity := total - trailerLength
	if capacity < minCapacity || capacity > maxCapacity || capacity&(capacity-1) != 0 {
		return 0, capacityError(total)
	}
	return capacity, nil
}
