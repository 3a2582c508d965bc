package journal

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// Segment file layout. A segment is a file of SegmentSize bytes (a power of
// two), named by the log position of its first byte, zero-padded to 20
// digits (segmentName). Its first segmentHeaderLength bytes are the header;
// records follow from there, each aligned to recordAlignment.
//
//	offset  size  field
//	0       8     magic "DUTYJSEG"
//	8       4     layout version (version)
//	12      4     header length (segmentHeaderLength)
//	16      8     segment size in bytes
//	24      8     start position (the name)
//	32      8     creation time, ns since the Unix epoch
//	40      4     CRC32C of bytes 0..39
//	44      20    zero
const (
	segmentHeaderLength = 64
	segMagicOffset      = 0
	segVersionOffset    = 8
	segHdrLenOffset     = 12
	segSizeOffset       = 16
	segStartOffset      = 24
	segCreatedOffset    = 32
	segCRCOffset        = 40
)

// Record layout. A record's length word is stored last (a release store,
// see commit), so a reader that loads a non-zero length (an acquire load)
// sees the whole record.
//
//	offset  size  field
//	0       4     length: header and body, before alignment (int32)
//	4       4     magic and version: recordMagic (endMagic for the end-of-segment marker)
//	8       4     CRC32C (Castagnoli) of bytes 4..7 and 12..length-1
//	12      4     stream id
//	16      4     type id (int32)
//	20      4     flags: recordParts, or zero
//	24      8     sequence number within the stream, from 0
//	32      8     timestamp, ns since the Unix epoch
//	40      ...   body
//
// The end-of-segment marker is a length word (the bytes left in the
// segment from the marker on) and endMagic; nothing else of it is read.
// Padding (padMagic) is what recovery leaves in place of a corrupt record
// it was told to skip: a length word and padMagic; readers step over it.
const (
	recordHeaderLength = 40
	recordAlignment    = 8
	endMarkerLength    = 8

	lengthOffset    = 0
	magicOffset     = 4
	crcOffset       = 8
	streamOffset    = 12
	typeOffset      = 16
	flagsOffset     = 20
	sequenceOffset  = 24
	timestampOffset = 32
)

// Record flags (the header's word at offset 20). A reader refuses a
// record with a flag it does not know.
const (
	// recordParts: the body is a multipart message, framed as a part
	// table (the part count, then each part's length, little-endian
	// uint32s) followed by the parts' bytes (Record.Parts).
	recordParts uint32 = 1 << 0

	knownFlags = recordParts
)

// version is the layout version of segments, records, checkpoints and
// indexes this package writes and reads.
const version = 1

// Magic words. A record's magic word is recordMagic; the end-of-segment
// marker's is endMagic. The low byte of both is the layout version.
const (
	segMagic    = "DUTYJSEG"
	recordMagic = 0x4A524400 | version // "\x01DRJ" little-endian
	endMagic    = 0x4A454F00 | version // "\x01OEJ" little-endian
	padMagic    = 0x4A504400 | version // "\x01DPJ" little-endian
	magicMask   = 0xFFFFFF00
)

// Segment size bounds.
const (
	MinSegmentSize     = 64 << 10
	maxSegmentSize     = 1 << 30
	defaultSegmentSize = 64 << 20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// align rounds n up to recordAlignment.
func align(n int64) int64 { return (n + recordAlignment - 1) &^ (recordAlignment - 1) }

// recordCRC is the CRC of a record's bytes rec[:length], skipping the
// length word (stored last, and checked by the CRC covering exactly length
// bytes) and the CRC word itself.
func recordCRC(rec []byte) uint32 {
	c := recordMagicCRC
	if binary.LittleEndian.Uint32(rec[magicOffset:]) != recordMagic {
		c = crc32.Update(0, castagnoli, rec[magicOffset:crcOffset])
	}
	return crc32.Update(c, castagnoli, rec[streamOffset:])
}

// recordMagicCRC is the CRC of recordMagic's four bytes, where every
// record's CRC starts: one CRC call per record instead of two.
var recordMagicCRC = crc32.Update(0, castagnoli, binary.LittleEndian.AppendUint32(nil, recordMagic))

// putSegmentHeader writes a segment header for a segment of size bytes
// starting at position start.
func putSegmentHeader(b []byte, size, start, created int64) {
	copy(b[segMagicOffset:], segMagic)
	le := binary.LittleEndian
	le.PutUint32(b[segVersionOffset:], version)
	le.PutUint32(b[segHdrLenOffset:], segmentHeaderLength)
	le.PutUint64(b[segSizeOffset:], uint64(size))
	le.PutUint64(b[segStartOffset:], uint64(start))
	le.PutUint64(b[segCreatedOffset:], uint64(created))
	le.PutUint32(b[segCRCOffset:], crc32.Checksum(b[:segCRCOffset], castagnoli))
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
	slotEmpty  slotKind = iota // a zero length word: nothing committed there yet
	slotRecord                 // a valid record
	slotEnd                    // the end-of-segment marker
	slotPad                    // padding left by recovery over a skipped corrupt record
)

// decodeSlot checks the slot at the start of b (b runs to the end of its
// segment) and returns what it holds; for a valid record, its header and
// body (aliasing b). The error is only for bytes no writer produces:
// ErrVersion for a known magic of another version, otherwise a
// reasonError to put in a *corruptError. It never panics, whatever b
// holds.
//
// With verify false the CRC is not checked (recovery's walk over the part
// of the log before the checkpoint, which was verified when it was
// written and flushed).
func decodeSlot(b []byte, verify bool) (h RecordHeader, body []byte, kind slotKind, err error) {
	if len(b) < endMarkerLength {
		if allZero(b) {
			return h, nil, slotEmpty, nil
		}
		return h, nil, 0, reasonError("bytes after the last record slot")
	}
	le := binary.LittleEndian
	length := int32(le.Uint32(b[lengthOffset:]))
	magic := le.Uint32(b[magicOffset:])
	if length == 0 {
		return h, nil, slotEmpty, nil
	}
	switch {
	case magic == endMagic:
		if int64(length) != int64(len(b)) {
			return h, nil, 0, reasonError(fmt.Sprintf("end-of-segment marker length %d, %d bytes left", length, len(b)))
		}
		return h, nil, slotEnd, nil
	case magic == padMagic:
		if length < endMarkerLength || align(int64(length)) > int64(len(b)) {
			return h, nil, 0, reasonError(fmt.Sprintf("padding length %d, %d bytes left", length, len(b)))
		}
		h.Length = length
		return h, nil, slotPad, nil
	case magic == recordMagic:
	case magic&magicMask == recordMagic&magicMask || magic&magicMask == endMagic&magicMask || magic&magicMask == padMagic&magicMask:
		return h, nil, 0, fmt.Errorf("%w: record version %d, want %d", ErrVersion, magic&^magicMask, version)
	default:
		return h, nil, 0, reasonError(fmt.Sprintf("bad magic %#08x", magic))
	}
	if length < recordHeaderLength || align(int64(length)) > int64(len(b)) {
		return h, nil, 0, reasonError(fmt.Sprintf("length %d, %d bytes left in the segment", length, len(b)))
	}
	rec := b[:length]
	if verify {
		if got, want := recordCRC(rec), le.Uint32(rec[crcOffset:]); got != want {
			return h, nil, 0, reasonError(fmt.Sprintf("CRC %#08x, header says %#08x", got, want))
		}
	}
	h = RecordHeader{
		Length:    length,
		StreamID:  le.Uint32(rec[streamOffset:]),
		TypeID:    int32(le.Uint32(rec[typeOffset:])),
		Flags:     le.Uint32(rec[flagsOffset:]),
		Sequence:  int64(le.Uint64(rec[sequenceOffset:])),
		Timestamp: int64(le.Uint64(rec[timestampOffset:])),
	}
	if h.Sequence < 0 {
		return RecordHeader{}, nil, 0, reasonError("negative sequence")
	}
	if h.Flags&^knownFlags != 0 {
		return RecordHeader{}, nil, 0, reasonError(fmt.Sprintf("unknown flags %#x", h.Flags))
	}
	return h, rec[recordHeaderLength:length:length], slotRecord, nil
}

// slotLength is the aligned length of a record or padding slot.
func slotLength(h RecordHeader) int64 { return align(int64(h.Length)) }

// reasonError is a decode failure before its position is known.
type reasonError string

func (e reasonError) Error() string { return string(e) }

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// nextValid returns the offset of the first slot at or after from (an
// aligned offset) in the segment b that holds a record whose header and
// CRC check, or -1 if there is none: the way past damage whose length word
// cannot be trusted. Only slots with the record magic are decoded, so a
// scan over zeros or garbage costs a load and a compare per slot.
func nextValid(b []byte, from int64) int64 {
	for o := from; o+recordHeaderLength <= int64(len(b)); o += recordAlignment {
		if binary.LittleEndian.Uint32(b[o+magicOffset:]) != recordMagic {
			continue
		}
		if _, _, kind, err := decodeSlot(b[o:], true); err == nil && kind == slotRecord {
			return o
		}
	}
	return -1
}
