package ringbuf

import "github.com/dutyrt/duty/internal/record"

// The byte layout of a ring buffer, identical to Agrona's RingBufferDescriptor
// and RecordDescriptor (docs/agrona.md, "Layout"). The trailer is the
// ring's own and written here; the record layout is the record core's
// (internal/record), which every log of records shares, exported here
// under the ring's names. layout_test.go asserts both against the
// documented offsets and against the bytes a ring actually writes.
//
// A buffer is Capacity bytes of records (a power of two) followed by a
// TrailerLength-byte trailer. Trailer offsets are relative to the end of the
// records, each field alone in a 128-byte slot (two cache lines, so adjacent
// line prefetch cannot cause false sharing):
//
//	capacity+0    padding
//	capacity+128  tail position       int64  producers
//	capacity+256  head cache position int64  producers
//	capacity+384  head position       int64  consumer
//	capacity+512  correlation counter int64  anyone (atomic add)
//	capacity+640  consumer heartbeat  int64  consumer (epoch ms)
//	capacity+768  end
//
// A record starts on an 8-byte boundary:
//
//	+0  int32 length: header + payload, unaligned. 0 = not written,
//	    negative = claimed (the negated length), positive = committed.
//	+4  int32 type id: >= 1 for messages, -1 for padding.
//	+8  payload (length-8 bytes)
//
// All words are little-endian (the native order of every platform duty
// supports).
const (
	// TrailerLength is the length of the trailer that follows the records.
	TrailerLength = record.TrailerLength

	// tailPositionOffset is the offset in the trailer of the tail position.
	tailPositionOffset = record.TailOffset
	// headCachePositionOffset is the offset in the trailer of the producers'
	// cached copy of the head position.
	headCachePositionOffset = record.HeadCacheOffset
	// headPositionOffset is the offset in the trailer of the head position.
	headPositionOffset = record.HeadOffset
	// correlationCounterOffset is the offset in the trailer of the counter
	// behind NextCorrelationID.
	correlationCounterOffset = record.CorrelationOffset
	// consumerHeartbeatOffset is the offset in the trailer of the consumer's
	// heartbeat time.
	consumerHeartbeatOffset = record.HeartbeatOffset

	// HeaderLength is the length of a record header.
	HeaderLength = record.HeaderLength
	// recordAlignment is the alignment of every record.
	recordAlignment = record.Alignment
	// lengthOffset is the offset in a record header of the length word.
	lengthOffset = record.LengthOffset
	// typeOffset is the offset in a record header of the type id.
	typeOffset = record.TypeOffset

	// paddingTypeID is the type id of the padding records that fill the end
	// of the ring at a wrap, and of aborted claims.
	paddingTypeID = record.PaddingTypeID

	// minCapacityOneToOne is the smallest capacity of a one-to-one ring:
	// a record plus the pre-zeroed header after it.
	minCapacityOneToOne = 2 * HeaderLength
	// minCapacityManyToOne is the smallest capacity of a many-to-one ring.
	minCapacityManyToOne = HeaderLength
)
