package broadcast

import "math"

// Byte layout of a broadcast buffer: Agrona's BroadcastBufferDescriptor and
// RecordDescriptor, bit for bit (docs/agrona.md, "Broadcast"), so that a Java
// process using Agrona's classes can share the buffer. This file is the
// single source of these numbers; layout_test.go asserts them against raw
// bytes written by a Transmitter.
//
//	+--------------------------------+ 0
//	| ring: capacity bytes           |   capacity is a power of two >= MinCapacity
//	|   records, 8-byte aligned      |
//	+--------------------------------+ capacity
//	| trailer: TrailerLength bytes   |
//	|   +0   int64 tail intent       |
//	|   +8   int64 tail              |
//	|   +16  int64 latest            |
//	+--------------------------------+ capacity + 128
//
// A record is
//
//	+0  int32 length   total record length including the header, unaligned
//	+4  int32 type     >= 1 for messages, PaddingTypeID for padding
//	+8  payload        length - HeaderLength bytes
//
// and the next record starts at align(length, RecordAlignment). All words are
// little-endian (native byte order on every platform duty supports).
const (
	// TrailerLength is the size of the trailer that follows the ring.
	TrailerLength = 128
	// TailIntentCounterOffset is the trailer offset of the int64 position the
	// transmitter is about to write up to. It is stored before a record's
	// bytes are written.
	TailIntentCounterOffset = 0
	// TailCounterOffset is the trailer offset of the int64 position up to
	// which records are complete. It is stored after a record's bytes.
	TailCounterOffset = 8
	// LatestCounterOffset is the trailer offset of the int64 start position of
	// the most recently completed record.
	LatestCounterOffset = 16

	// HeaderLength is the size of a record header.
	HeaderLength = 8
	// LengthOffset is the offset of the int32 record length in a header.
	LengthOffset = 0
	// TypeOffset is the offset of the int32 type id in a header.
	TypeOffset = 4
	// RecordAlignment is the alignment of every record in the ring.
	RecordAlignment = 8
	// PaddingTypeID is the type id of the padding record that fills the end of
	// the ring when a message does not fit there contiguously.
	PaddingTypeID = -1

	// MinCapacity is the smallest ring capacity accepted. Agrona accepts any
	// power of two, but below 16 bytes a maximum-length record (capacity/8
	// payload bytes plus the header, aligned) no longer fits in the ring.
	MinCapacity = 16
	// MaxCapacity is the largest ring capacity accepted, as in Agrona, whose
	// capacities and record lengths are 32-bit ints.
	MaxCapacity = 1 << 30

	// maxPosition bounds the positions a receiver accepts from the trailer, so
	// that position arithmetic (position + capacity) can never overflow. A
	// real transmitter needs 146 years at 1 GB/s to reach it.
	maxPosition = math.MaxInt64 >> 1
)

// MaxMsgLength returns the largest payload, in bytes, a buffer with a ring of
// capacity bytes carries: capacity/8, as in Agrona.
func MaxMsgLength(capacity int) int { return capacity / 8 }

// align rounds n up to a multiple of RecordAlignment.
func align(n int64) int64 { return (n + RecordAlignment - 1) &^ (RecordAlignment - 1) }

// checkCapacity returns the ring capacity of a buffer of total bytes, or
// ErrCapacity.
func checkCapacity(total int) (int, error) {
	capacity := total - TrailerLength
	if capacity < MinCapacity || capacity > MaxCapacity || capacity&(capacity-1) != 0 {
		return 0, capacityError(total)
	}
	return capacity, nil
}
