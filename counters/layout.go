package counters

import (
	"fmt"
	"math"
)

// Byte layout of counters: Agrona's CountersReader/CountersManager layout,
// bit for bit (docs/agrona.md, "Counters"), so that Agrona's classes and
// Aeron-style stat tools can read the same counters. This file is the
// single source of these numbers; layout_test.go asserts them against raw
// bytes written by a Manager.
//
// Counters live in two regions, normally two parts of one shared file:
//
//	values:   one valueRecordLength-byte record per counter id,
//	          id i at i*valueRecordLength
//	metadata: one metadataRecordLength-byte record per counter id,
//	          id i at i*metadataRecordLength
//
// A value record (two cache lines, so each hot counter has its own):
//
//	+0   int64 value
//	+8   int64 registration id (identifies this incarnation of the slot)
//	+16  int64 owner id
//	+24  int64 reference id
//	+32  ..128 padding
//
// A metadata record:
//
//	+0   int32 state: stateUnused, StateAllocated, StateReclaimed
//	+4   int32 type id
//	+8   int64 free-for-reuse deadline (epoch ms; notFreeToReuse while allocated)
//	+16  [112]byte key
//	+128 int32 label length (0..MaxLabelLength)
//	+132 [380]byte label (UTF-8)
//
// All words are little-endian (the native order of every platform duty
// supports).
const (
	// valueRecordLength is the length of a value record (Agrona's
	// COUNTER_LENGTH).
	valueRecordLength = 128
	// valueFieldOffset is the offset of the int64 counter value in a value record.
	valueFieldOffset = 0
	// registrationIDOffset is the offset of the int64 registration id in a
	// value record.
	registrationIDOffset = 8
	// ownerIDOffset is the offset of the int64 owner id in a value record.
	ownerIDOffset = 16
	// referenceIDOffset is the offset of the int64 reference id in a value
	// record.
	referenceIDOffset = 24

	// metadataRecordLength is the length of a metadata record (Agrona's
	// METADATA_LENGTH).
	metadataRecordLength = 512
	// stateOffset is the offset of the int32 record state in a metadata
	// record.
	stateOffset = 0
	// typeIDOffset is the offset of the int32 type id in a metadata record.
	typeIDOffset = 4
	// freeForReuseDeadlineOffset is the offset of the int64 deadline (epoch
	// ms) after which a freed id may be reused.
	freeForReuseDeadlineOffset = 8
	// keyOffset is the offset of the key in a metadata record.
	keyOffset = 16
	// maxKeyLength is the length of the key area.
	maxKeyLength = 112
	// labelLengthOffset is the offset of the int32 label length in a
	// metadata record (Agrona's LABEL_OFFSET).
	labelLengthOffset = 128
	// labelOffset is the offset of the label bytes in a metadata record.
	labelOffset = labelLengthOffset + 4
	// maxLabelLength is the largest label length in bytes.
	maxLabelLength = 380
	// fullLabelLength is the length of the label area including its length
	// word.
	fullLabelLength = 384

	// metadataToValuesRatio is the minimum ratio of the metadata region's
	// length to the values region's (metadataRecordLength/valueRecordLength).
	metadataToValuesRatio = metadataRecordLength / valueRecordLength

	// maxCounters is the largest number of counters one pair of regions
	// holds: the metadata region then stays below 2 GiB, the largest buffer
	// Agrona (int-indexed) can wrap.
	maxCounters = math.MaxInt32 / metadataRecordLength
)

// Record states, stored at stateOffset.
const (
	// stateUnused is the state of a record never allocated. Ids are handed
	// out densely from 0, so the first unused record ends a scan.
	stateUnused int32 = 0
	// StateAllocated is the state of a live counter.
	StateAllocated int32 = 1
	// StateReclaimed is the state of a freed counter, waiting for reuse.
	StateReclaimed int32 = -1
)

const (
	// notFreeToReuse is the free-for-reuse deadline of an allocated record.
	notFreeToReuse int64 = math.MaxInt64
	// nullCounterID is the id that means "no counter".
	nullCounterID = -1
	// defaultRegistrationID, defaultOwnerID and defaultReferenceID are the
	// ids of a value record that was never given one.
	defaultRegistrationID int64 = 0
	defaultOwnerID        int64 = 0
	defaultReferenceID    int64 = 0
)

// valueOffset returns the offset of id's value record in the values region.
func valueOffset(id int) int { return id * valueRecordLength }

// metadataOffset returns the offset of id's metadata record in the metadata
// region.
func metadataOffset(id int) int { return id * metadataRecordLength }

// Regions says where the metadata and values regions of n counters sit when
// both are laid out in one buffer (a section of a shared file): metadata
// first, then values, as in Aeron's CnC file. Every offset is a multiple of
// metadataRecordLength, so a page-aligned buffer keeps each value record on
// its own two cache lines.
type Regions struct {
	// Counters is the number of counter ids (MaxCounterID+1).
	Counters int
	// MetadataOffset and MetadataLength locate the metadata region.
	MetadataOffset, MetadataLength int
	// ValuesOffset and ValuesLength locate the values region.
	ValuesOffset, ValuesLength int
	// Length is the total length of the buffer.
	Length int
}

// Layout returns the regions of n counters laid out in one buffer. n must be
// between 1 and 4 194 303, otherwise the error wraps ErrArgument.
func Layout(n int) (Regions, error) {
	if n < 1 || n > maxCounters {
		return Regions{}, fmt.Errorf("%w: %d counters, want 1..%d", ErrArgument, n, maxCounters)
	}
	meta := n * metadataRecordLength
	vals := n * valueRecordLength
	return Regions{
		Counters:       n,
		MetadataOffset: 0,
		MetadataLength: meta,
		ValuesOffset:   meta,
		ValuesLength:   vals,
		Length:         meta + vals,
	}, nil
}

// Split cuts a buffer laid out by Layout into its metadata and values
// regions. len(b) must be n*(metadataRecordLength+valueRecordLength) for n
// in 1..4 194 303, otherwise the error wraps ErrArgument. Split neither
// reads nor writes b; the alignment is checked by NewManager and NewReader.
func Split(b []byte) (metadata, values []byte, err error) {
	const per = metadataRecordLength + valueRecordLength
	n := len(b) / per
	if len(b)%per != 0 || n < 1 || n > maxCounters {
		return nil, nil, fmt.Errorf("%w: buffer of %d bytes is not n*%d bytes for 1 <= n <= %d", ErrArgument, len(b), per, maxCounters)
	}
	r, _ := Layout(n)
	return b[r.MetadataOffset : r.MetadataOffset+r.MetadataLength : r.MetadataOffset+r.MetadataLength],
		b[r.ValuesOffset : r.ValuesOffset+r.ValuesLength : r.ValuesOffset+r.ValuesLength], nil
}
