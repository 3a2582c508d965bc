package record

// The record layout, Agrona's RecordDescriptor (docs/agrona.md, "Layout"), bit for
// bit: the one place these numbers are written. Package ringbuf exports
// them under its own names (ringbuf.HeaderLength, ...), and the IPC
// publication's log uses the same records.
//
// A record starts on an 8-byte boundary:
//
//	+0  int32 length: header + payload, unaligned. 0 = not written,
//	    negative = claimed (the negated length), positive = committed.
//	+4  int32 type id: >= 1 for messages, -1 for padding.
//	+8  payload (length-8 bytes)
//
// All words are little-endian (the native order of every platform duty
// supports), so the header is also one 8-byte word (HeaderWord).
const (
	// HeaderLength is the length of a record header.
	HeaderLength = 8
	// Alignment is the alignment of every record.
	Alignment = 8
	// LengthOffset is the offset in a record header of the length word.
	LengthOffset = 0
	// TypeOffset is the offset in a record header of the type id.
	TypeOffset = 4
	// PaddingTypeID is the type id of padding: the end of a log skipped at
	// a wrap, an aborted claim, a claim released by an unblock.
	PaddingTypeID int32 = -1
)

// Align rounds n up to the record alignment.
func Align(n int) int { return (n + Alignment - 1) &^ (Alignment - 1) }

// Size is the aligned size of a record with a payload of payloadLen bytes:
// the space it takes in a log.
func Size(payloadLen int) int { return Align(payloadLen + HeaderLength) }

// HeaderWord is a record header as one 8-byte word, for one store (or one
// compare-and-swap) of length and type: the length in the low half, the
// type in the high half (little-endian: length at LengthOffset, type at
// TypeOffset).
func HeaderWord(length int, typeID int32) int64 {
	return int64(uint64(uint32(length)) | uint64(uint32(typeID))<<32)
}

// Marker returns the claim marker of a record of payloadLen bytes and type
// typeID: the header word with the negated record length.
func Marker(payloadLen int, typeID int32) int64 {
	return HeaderWord(-(payloadLen + HeaderLength), typeID)
}
