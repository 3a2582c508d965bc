package journalfile

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"unsafe"
)

// Segment file layout. A segment is a file of SegmentSize bytes (a power of
// two), named by the log position of its first byte, zero-padded to 20
// digits (SegmentName). Its first SegmentHeaderLength bytes are the header;
// records follow from there, each aligned to RecordAlignment.
//
//	offset  size  field
//	0       8     magic "DUTYJSEG"
//	8       4     layout version (Version)
//	12      4     header length (SegmentHeaderLength)
//	16      8     segment size in bytes
//	24      8     start position (the name)
//	32      8     creation time, ns since the Unix epoch
//	40      4     CRC32C of bytes 0..39
//	44      20    zero
const (
	SegmentHeaderLength = 64
	SegMagicOffset      = 0
	SegVersionOffset    = 8
	segHdrLenOffset     = 12
	SegSizeOffset       = 16
	SegStartOffset      = 24
	SegCreatedOffset    = 32
	SegCRCOffset        = 40
)

// Record layout. A record's length word is stored last (a release store,
// see commit), so a reader that loads a non-zero length (an acquire load)
// sees the whole record.
//
//	offset  size  field
//	0       4     length: header and body, before alignment (int32)
//	4       4     magic and version: RecordMagic (EndMagic for the end-of-segment marker)
//	8       4     CRC32C (Castagnoli) of bytes 4..7 and 12..length-1
//	12      4     stream id
//	16      4     type id (int32)
//	20      4     flags: RecordParts, or zero
//	24      8     sequence number within the stream, from 0
//	32      8     timestamp, ns since the Unix epoch
//	40      ...   body
//
// The end-of-segment marker is a length word (the bytes left in the
// segment from the marker on) and EndMagic; nothing else of it is read.
// Padding (PadMagic) is what recovery leaves in place of a corrupt record
// it was told to skip: a length word and PadMagic; readers step over it.
const (
	RecordHeaderLength = 40
	RecordAlignment    = 8
	EndMarkerLength    = 8

	LengthOffset    = 0
	MagicOffset     = 4
	CrcOffset       = 8
	StreamOffset    = 12
	TypeOffset      = 16
	FlagsOffset     = 20
	SequenceOffset  = 24
	TimestampOffset = 32
)

// Record flags (the header's word at offset 20). A reader refuses a
// record with a flag it does not know.
const (
	// RecordParts: the body is a multipart message, framed as a part
	// table (the part count, then each part's length, little-endian
	// uint32s) followed by the parts' bytes (Record.Parts).
	RecordParts uint32 = 1 << 0

	KnownFlags = RecordParts
)

// Version is the layout version of segments, records, checkpoints and
// indexes this package writes and reads.
const Version = 1

// Magic words. A record's magic word is RecordMagic; the end-of-segment
// marker's is EndMagic. The low byte of both is the layout version.
const (
	SegMagic    = "DUTYJSEG"
	RecordMagic = 0x4A524400 | Version // "\x01DRJ" little-endian
	EndMagic    = 0x4A454F00 | Version // "\x01OEJ" little-endian
	PadMagic    = 0x4A504400 | Version // "\x01DPJ" little-endian
	MagicMask   = 0xFFFFFF00
)

// Segment size bounds.
const (
	MinSegmentSize     = 64 << 10
	maxSegmentSize     = 1 << 30
	DefaultSegmentSize = 64 << 20
)

var Castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Align rounds n up to RecordAlignment.
func Align(n int64) int64 { return (n + RecordAlignment - 1) &^ (RecordAlignment - 1) }

// RecordCRC is the CRC of a record's bytes rec[:length], skipping the
// length word (stored last, and checked by the CRC covering exactly length
// bytes) and the CRC word itself.
func RecordCRC(rec []byte) uint32 {
	c := recordMagicCRC
	if binary.LittleEndian.Uint32(rec[MagicOffset:]) != RecordMagic {
		c = crcUpdate(0, rec[MagicOffset:CrcOffset])
	}
	return crcUpdate(c, rec[StreamOffset:])
}

// HeaderPrefixCRC is the CRC a record's CRC has reached after its magic
// word (RecordMagic) and its stream, type and flags words: the part of
// the header that a writer's records of one stream and type share. A
// writer that keeps it computes only PrefixedRecordCRC per record.
func HeaderPrefixCRC(streamID uint32, typeID int32, flags uint32) uint32 {
	var b [SequenceOffset - StreamOffset]byte
	le := binary.LittleEndian
	le.PutUint32(b[:], streamID) // b[0] is the header's StreamOffset
	le.PutUint32(b[TypeOffset-StreamOffset:], uint32(typeID))
	le.PutUint32(b[FlagsOffset-StreamOffset:], flags)
	return crcUpdate(recordMagicCRC, b[:])
}

// PrefixedRecordCRC is RecordCRC of a record whose magic, stream, type
// and flags words gave prefix (HeaderPrefixCRC): one CRC pass from the
// sequence number on, whose loads are aligned as the record is. It
// inlines.
func PrefixedRecordCRC(prefix uint32, rec []byte) uint32 {
	return crcUpdate(prefix, rec[SequenceOffset:])
}

// recordMagicCRC is the CRC of RecordMagic's four bytes, where every
// record's CRC starts: one CRC call per record instead of two.
var recordMagicCRC = crc32.Update(0, Castagnoli, binary.LittleEndian.AppendUint32(nil, RecordMagic))

// putSegmentHeader writes a segment header for a segment of size bytes
// starting at position start.
func putSegmentHeader(b []byte, size, start, created int64) {
	copy(b[SegMagicOffset:], SegMagic)
	le := binary.LittleEndian
	le.PutUint32(b[SegVersionOffset:], Version)
	le.PutUint32(b[segHdrLenOffset:], SegmentHeaderLength)
	le.PutUint64(b[SegSizeOffset:], uint64(size))
	le.PutUint64(b[SegStartOffset:], uint64(start))
	le.PutUint64(b[SegCreatedOffset:], uint64(created))
	le.PutUint32(b[SegCRCOffset:], crc32.Checksum(b[:SegCRCOffset], Castagnoli))
}

// RecordHeader is a decoded record header.
type RecordHeader struct {
	Length    int32  // header and body, before alignment
	StreamID  uint32 // the stream the record belongs to
	TypeID    int32  // the application's message type
	Flags     uint32 // bit 0: a multipart body (Record.Parts); the other bits zero
	Sequence  int64  // the record's number within its stream, from 0
	Timestamp int64  // ns since the Unix epoch, from Options.Clock
}

// slotKind says what DecodeRecord found.
type slotKind uint8

const (
	SlotEmpty  slotKind = iota // a zero length word: nothing committed there yet
	SlotRecord                 // a valid record
	SlotEnd                    // the end-of-segment marker
	SlotPad                    // padding left by recovery over a skipped corrupt record
)

// RecordAt decodes the record at p, with room bytes from p to the end of
// its segment, without its CRC: ok when the slot holds a record of this
// layout version whose length fits in room and whose sequence and flags
// check, the header DecodeSlot returns with verify false. Anything else
// (an empty slot, a marker, padding, damage) is not ok, and DecodeSlot
// says what it is. Its loads are plain: the caller has loaded the length
// word with acquire first. It reads nothing past p+room.
func RecordAt(p unsafe.Pointer, room int64) (h RecordHeader, ok bool) {
	if room < RecordHeaderLength {
		return h, false
	}
	b := (*[RecordHeaderLength]byte)(p)
	le := binary.LittleEndian
	h = RecordHeader{
		Length:    int32(le.Uint32(b[LengthOffset:])),
		StreamID:  le.Uint32(b[StreamOffset:]),
		TypeID:    int32(le.Uint32(b[TypeOffset:])),
		Flags:     le.Uint32(b[FlagsOffset:]),
		Sequence:  int64(le.Uint64(b[SequenceOffset:])),
		Timestamp: int64(le.Uint64(b[TimestampOffset:])),
	}
	if le.Uint32(b[MagicOffset:]) != RecordMagic || h.Length < RecordHeaderLength || Align(int64(h.Length)) > room ||
		h.Sequence < 0 || h.Flags&^KnownFlags != 0 {
		return RecordHeader{}, false
	}
	return h, true
}

// DecodeSlot checks the slot at the start of b (b runs to the end of its
// segment) and returns what it holds; for a valid record, its header and
// body (aliasing b). The error is only for bytes no writer produces:
// ErrVersion for a known magic of another version, otherwise a
// reasonError to put in a *corruptError. It never panics, whatever b
// holds.
//
// With verify false the CRC is not checked (recovery's walk over the part
// of the log before the checkpoint, which was verified when it was
// written and flushed).
func DecodeSlot(b []byte, verify bool) (h RecordHeader, body []byte, kind slotKind, err error) {
	if len(b) < EndMarkerLength {
		if AllZero(b) {
			return h, nil, SlotEmpty, nil
		}
		return h, nil, 0, reasonError("bytes after the last record slot")
	}
	le := binary.LittleEndian
	length := int32(le.Uint32(b[LengthOffset:]))
	magic := le.Uint32(b[MagicOffset:])
	if length == 0 {
		return h, nil, SlotEmpty, nil
	}
	switch {
	case magic == EndMagic:
		if int64(length) != int64(len(b)) {
			return h, nil, 0, reasonError(fmt.Sprintf("end-of-segment marker length %d, %d bytes left", length, len(b)))
		}
		return h, nil, SlotEnd, nil
	case magic == PadMagic:
		if length < EndMarkerLength || Align(int64(length)) > int64(len(b)) {
			return h, nil, 0, reasonError(fmt.Sprintf("padding length %d, %d bytes left", length, len(b)))
		}
		h.Length = length
		return h, nil, SlotPad, nil
	case magic == RecordMagic:
	case magic&MagicMask == RecordMagic&MagicMask || magic&MagicMask == EndMagic&MagicMask || magic&MagicMask == PadMagic&MagicMask:
		return h, nil, 0, fmt.Errorf("%w: record version %d, want %d", ErrVersion, magic&^MagicMask, Version)
	default:
		return h, nil, 0, reasonError(fmt.Sprintf("bad magic %#08x", magic))
	}
	if length < RecordHeaderLength || Align(int64(length)) > int64(len(b)) {
		return h, nil, 0, reasonError(fmt.Sprintf("length %d, %d bytes left in the segment", length, len(b)))
	}
	rec := b[:length]
	if verify {
		if got, want := RecordCRC(rec), le.Uint32(rec[CrcOffset:]); got != want {
			return h, nil, 0, reasonError(fmt.Sprintf("CRC %#08x, header says %#08x", got, want))
		}
	}
	h = RecordHeader{
		Length:    length,
		StreamID:  le.Uint32(rec[StreamOffset:]),
		TypeID:    int32(le.Uint32(rec[TypeOffset:])),
		Flags:     le.Uint32(rec[FlagsOffset:]),
		Sequence:  int64(le.Uint64(rec[SequenceOffset:])),
		Timestamp: int64(le.Uint64(rec[TimestampOffset:])),
	}
	if h.Sequence < 0 {
		return RecordHeader{}, nil, 0, reasonError("negative sequence")
	}
	if h.Flags&^KnownFlags != 0 {
		return RecordHeader{}, nil, 0, reasonError(fmt.Sprintf("unknown flags %#x", h.Flags))
	}
	return h, rec[RecordHeaderLength:length:length], SlotRecord, nil
}

// SlotLength is the aligned length of a record or padding slot.
func SlotLength(h RecordHeader) int64 { return Align(int64(h.Length)) }

// reasonError is a decode failure before its position is known.
type reasonError string

func (e reasonError) Error() string { return string(e) }

func AllZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// NextValid returns the offset of the first slot at or after from (an
// aligned offset) in the segment b that holds a record whose header and
// CRC check, or -1 if there is none: the way past damage whose length word
// cannot be trusted. Only slots with the record magic are decoded, so a
// scan over zeros or garbage costs a load and a compare per slot.
func NextValid(b []byte, from int64) int64 {
	for o := from; o+RecordHeaderLength <= int64(len(b)); o += RecordAlignment {
		if binary.LittleEndian.Uint32(b[o+MagicOffset:]) != RecordMagic {
			continue
		}
		if _, _, kind, err := DecodeSlot(b[o:], true); err == nil && kind == SlotRecord {
			return o
		}
	}
	return -1
}
