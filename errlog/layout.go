package errlog

import "math"

// Byte layout of a distinct error log: Agrona's DistinctErrorLog record
// layout, bit for bit (docs/agrona.md, "Distinct error log"), so that a Java
// process can read the log with Agrona's ErrorLogReader. This file is the
// single source of these numbers; layout_test.go asserts them against raw
// bytes written by a Log.
//
// The buffer is a sequence of records from offset 0, each starting on a
// RecordAlignment boundary:
//
//	+0   int32 length: HeaderLength + encoded text bytes (not aligned);
//	           0 ends the log (stored last, with release semantics)
//	+4   int32 observation count
//	+8   int64 last observation time, ms since the Unix epoch
//	+16  int64 first observation time, ms since the Unix epoch
//	+24  []byte encoded text (UTF-8), length-HeaderLength bytes
//
// The next record starts at the record's offset plus length rounded up to
// RecordAlignment. All words are little-endian (the native order of every
// platform duty supports).
const (
	// RecordAlignment is the alignment of every record (Agrona's
	// RECORD_ALIGNMENT).
	RecordAlignment = 8
	// LengthOffset is the offset of the int32 record length (Agrona's
	// LENGTH_OFFSET).
	LengthOffset = 0
	// ObservationCountOffset is the offset of the int32 observation count
	// (Agrona's OBSERVATION_COUNT_OFFSET).
	ObservationCountOffset = 4
	// LastObservationTimestampOffset is the offset of the int64 time of the
	// last observation, epoch ms (Agrona's LAST_OBSERVATION_TIMESTAMP_OFFSET).
	LastObservationTimestampOffset = 8
	// FirstObservationTimestampOffset is the offset of the int64 time of the
	// first observation, epoch ms (Agrona's FIRST_OBSERVATION_TIMESTAMP_OFFSET).
	FirstObservationTimestampOffset = 16
	// EncodedErrorOffset is the offset of the encoded text (Agrona's
	// ENCODED_ERROR_OFFSET).
	EncodedErrorOffset = 24
	// HeaderLength is the length of a record's header: the smallest valid
	// record length.
	HeaderLength = EncodedErrorOffset

	// maxRecordLength is the largest record length the int32 length word
	// holds.
	maxRecordLength = math.MaxInt32
)

// alignRecord rounds a record length (at most maxRecordLength) up to
// RecordAlignment.
func alignRecord(length int) int { return (length + RecordAlignment - 1) &^ (RecordAlignment - 1) }
