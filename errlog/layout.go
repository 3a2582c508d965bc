package errlog

import "math"

// Byte layout of a distinct error log: Agrona's DistinctErrorLog record
// layout, bit for bit (docs/agrona.md, "Distinct error log"), so that a Java
// process can read the log with Agrona's ErrorLogReader. This file is the
// single source of these numbers; layout_test.go asserts them against raw
// bytes written by a Log.
//
// The buffer is a sequence of records from offset 0, each starting on a
// recordAlignment boundary:
//
//	+0   int32 length: headerLength + encoded text bytes (not aligned);
//	           0 ends the log (stored last, with release semantics)
//	+4   int32 observation count
//	+8   int64 last observation time, ms since the Unix epoch
//	+16  int64 first observation time, ms since the Unix epoch
//	+24  []byte encoded text (UTF-8), length-headerLength bytes
//
// The next record starts at the record's offset plus length rounded up to
// recordAlignment. All words are little-endian (the native order of every
// platform duty supports).
const (
	// recordAlignment is the alignment of every record (Agrona's
	// RECORD_ALIGNMENT).
	recordAlignment = 8
	// lengthOffset is the offset of the int32 record length (Agrona's
	// LENGTH_OFFSET).
	lengthOffset = 0
	// observationCountOffset is the offset of the int32 observation count
	// (Agrona's OBSERVATION_COUNT_OFFSET).
	observationCountOffset = 4
	// lastObservationTimestampOffset is the offset of the int64 time of the
	// last observation, epoch ms (Agrona's LAST_OBSERVATION_TIMESTAMP_OFFSET).
	lastObservationTimestampOffset = 8
	// firstObservationTimestampOffset is the offset of the int64 time of the
	// first observation, epoch ms (Agrona's FIRST_OBSERVATION_TIMESTAMP_OFFSET).
	firstObservationTimestampOffset = 16
	// encodedErrorOffset is the offset of the encoded text (Agrona's
	// ENCODED_ERROR_OFFSET).
	encodedErrorOffset = 24
	// headerLength is the length of a record's header: the smallest valid
	// record length.
	headerLength = encodedErrorOffset

	// maxRecordLength is the largest record length the int32 length word
	// holds.
	maxRecordLength = math.MaxInt32
)

// alignRecord rounds a record length (at most maxRecordLength) up to
// recordAlignment.
func alignRecord(length int) int { return (length + recordAlignment - 1) &^ (recordAlignment - 1) }
