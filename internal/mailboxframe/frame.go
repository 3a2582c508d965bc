package mailbox

import (
	"encoding/binary"

	"github.com/dutyrt/duty/internal/mailboxdef"
	"github.com/dutyrt/duty/internal/record"
)

// The framing of a mailbox over a many-to-one ring. This file is the only
// place where it is written down; frame_test.go asserts it byte by byte and
// docs/mailbox.md explains it.
//
// A message travels in one of two forms.
//
// Plain: one ring record whose type id is the user's type id
// (1..MaxTypeID) and whose payload is the message's bytes, exactly as
// Agrona writes it. A Send of a payload up to MaxClaimLength bytes, a
// Claim and a typed message take this form.
//
// Framed: n >= 1 records published as one ring batch (one claim, one
// publication), each of type framedFlag|typeID, each payload starting with
// a frameHeaderLength-byte frame header followed by a fragment of the
// message body:
//
//	+0   int64  sender key: the sender's id, taken from the ring's
//	            correlation counter (unique across processes sharing it)
//	+8   uint64 sequence number of the message among the sender's framed
//	            messages (a Sender's count; 0 for the Mailbox's methods,
//	            which take a fresh key per message)
//	+16  uint32 record index within the message, 0..count-1
//	+20  uint32 record count of the message, >= 1
//	+24  uint32 body length: the sum of the fragments' lengths
//	+28  uint32 part count, >= 1
//	+32  body fragment (the rest of the record)
//
// The body is the concatenation of the fragments in index order. For a
// one-part message it is the payload itself; for a message of two or more
// parts it is, for each part, a uint32 length followed by the part's bytes
// (ZeroMQ-style length-prefixed frames). All integers are little-endian.
//
// A multipart message that fits in one record is one framed record
// (count 1); a message too large for one record is split into fragments of
// MaxClaimLength-frameHeaderLength bytes (the last one shorter).
const (
	// MaxTypeID is the largest user type id (the record core's,
	// internal/record). The bits above it are reserved for the framing.
	MaxTypeID = record.MaxTypeID
	// framedFlag marks the type id of a framed record: framedFlag|typeID.
	framedFlag = record.FlagFramed
	// reservedTypeBits are the type id bits a valid record may set only
	// as framedFlag: all the record core's flag bits (a mailbox has no
	// fragment BEGIN or END: its framed records carry their index).
	reservedTypeBits = record.FlagBits

	// frameHeaderLength is the length of the frame header at the start of
	// every framed record's payload (internal/mailboxdef, docs/layouts.md).
	frameHeaderLength = mailboxdef.HeaderLength
	// Offsets in the frame header.
	frameKeyOffset        = mailboxdef.KeyOffset
	frameSequenceOffset   = mailboxdef.SequenceOffset
	frameIndexOffset      = mailboxdef.IndexOffset
	frameCountOffset      = mailboxdef.CountOffset
	frameBodyLengthOffset = mailboxdef.BodyLengthOffset
	framePartsOffset      = mailboxdef.PartsOffset

	// partLengthPrefix is the length of the prefix of each part in the
	// body of a multipart message.
	partLengthPrefix = mailboxdef.PartLengthPrefix

	// minCapacity is the smallest ring capacity a mailbox accepts: its
	// records must carry a frame header and a useful fragment.
	minCapacity = mailboxdef.MinCapacity
)

// frameHeader is a decoded frame header.
type frameHeader struct {
	key     int64
	seq     uint64
	index   uint32
	count   uint32
	bodyLen uint32
	parts   uint32
}

func putFrameHeader(b []byte, h *frameHeader) {
	_ = b[frameHeaderLength-1]
	binary.LittleEndian.PutUint64(b[frameKeyOffset:], uint64(h.key))
	binary.LittleEndian.PutUint64(b[frameSequenceOffset:], h.seq)
	binary.LittleEndian.PutUint32(b[frameIndexOffset:], h.index)
	binary.LittleEndian.PutUint32(b[frameCountOffset:], h.count)
	binary.LittleEndian.PutUint32(b[frameBodyLengthOffset:], h.bodyLen)
	binary.LittleEndian.PutUint32(b[framePartsOffset:], h.parts)
}

// readFrameHeader decodes the header at the start of b, which must be at
// least frameHeaderLength bytes long (callers check).
func readFrameHeader(b []byte, h *frameHeader) {
	_ = b[frameHeaderLength-1]
	h.key = int64(binary.LittleEndian.Uint64(b[frameKeyOffset:]))
	h.seq = binary.LittleEndian.Uint64(b[frameSequenceOffset:])
	h.index = binary.LittleEndian.Uint32(b[frameIndexOffset:])
	h.count = binary.LittleEndian.Uint32(b[frameCountOffset:])
	h.bodyLen = binary.LittleEndian.Uint32(b[frameBodyLengthOffset:])
	h.parts = binary.LittleEndian.Uint32(b[framePartsOffset:])
}

// sameMessage reports whether h is a later record of the message whose
// first record is first.
func (h *frameHeader) sameMessage(first *frameHeader) bool {
	return h.key == first.key && h.seq == first.seq && h.count == first.count &&
		h.bodyLen == first.bodyLen && h.parts == first.parts
}

// recordClass is what a record's type id says it is.
type recordClass uint8

const (
	classPlain recordClass = iota
	classFramed
	classInvalid
)

// classify splits a record type id (>= 1, as the ring guarantees) into its
// class and the user type id.
func classify(recordType int32) (recordClass, int32) {
	if recordType <= MaxTypeID {
		return classPlain, recordType
	}
	user := recordType & MaxTypeID
	if recordType&reservedTypeBits != framedFlag || user == 0 {
		return classInvalid, 0
	}
	return classFramed, user
}

// bodyLength returns the body length of a message with the given parts:
// the payload for one part, length-prefixed parts for more.
func bodyLength(parts [][]byte) int {
	if len(parts) == 1 {
		return len(parts[0])
	}
	n := 0
	for _, p := range parts {
		n += partLengthPrefix + len(p)
	}
	return n
}

// layout is the framing geometry of one mailbox, fixed by its ring and
// whether its records carry a checksum.
type layout struct {
	maxRecord  int // payload bytes of one record: the ring's MaxMessageLength
	over       int // bytes of every record's payload before its body or frame header: checksumLength, or 0
	maxFrag    int // body bytes of one framed record
	maxBatch   int // bytes of the largest batch a message may claim
	maxMessage int // largest body length
	maxRecords int // most records of one message
}

func newLayout(capacity, maxRecord, maxMessage int, checksum bool) layout {
	l := layout{maxRecord: maxRecord, maxBatch: capacity / 2}
	if checksum {
		l.over = checksumLength
	}
	head := l.over + frameHeaderLength // a framed record's payload before its fragment
	l.maxFrag = maxRecord - head
	full := l.maxBatch / record.Size(maxRecord) // records of maxFrag body bytes
	l.maxMessage = full * l.maxFrag
	if rest := l.maxBatch - full*record.Size(maxRecord); rest >= record.Size(head+1) {
		l.maxMessage += (rest-record.HeaderLength)&^(record.Alignment-1) - head
	}
	if maxMessage > 0 && maxMessage < l.maxMessage {
		l.maxMessage = maxMessage
	}
	l.maxRecords = (l.maxMessage + l.maxFrag - 1) / l.maxFrag
	return l
}

// records returns the record count and the batch size of a framed message
// with a body of bodyLen bytes.
func (l *layout) records(bodyLen int) (count, size int) {
	count = (bodyLen + l.maxFrag - 1) / l.maxFrag
	if count == 0 {
		count = 1
	}
	last := bodyLen - (count-1)*l.maxFrag
	size = (count-1)*record.Size(l.maxRecord) + record.Size(l.over+frameHeaderLength+last)
	return count, size
}
