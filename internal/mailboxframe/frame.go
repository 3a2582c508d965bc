// Package mailboxframe is package mailbox's framed-record layer: the frame
// header of a message that travels as one batch of records (multipart, or
// larger than one record), the classification of a record's type id, the
// framing geometry of a mailbox, the checksum that seals a record in a
// checksummed mailbox, the writer that spreads a message's body over its
// fragments, and the reassembly of a multi-record message at its first
// record. Package mailbox claims, publishes, drains and counts; this
// package only reads and writes the bytes of framed records. Its numbers
// are internal/mailboxdef's (docs/layouts.md lists them; docs/mailbox.md
// explains the framing).
package mailboxframe

import (
	"encoding/binary"

	"github.com/dutyrt/duty/internal/mailboxdef"
	"github.com/dutyrt/duty/internal/record"
)

// The framing of a mailbox over a many-to-one ring. This file is the only
// place where it is written down; the tests here and mailbox's assert it byte
// by byte and docs/mailbox.md explains it.
//
// A message travels in one of two forms.
//
// Plain: one ring record whose type id is the user's type id
// (1..record.MaxTypeID) and whose payload is the message's bytes, exactly
// as Agrona writes it. A Send of a payload up to MaxClaimLength bytes, a
// Claim and a typed message take this form.
//
// Framed: n >= 1 records published as one ring batch (one claim, one
// publication), each of type record.FlagFramed|typeID, each payload
// starting with a HeaderLength-byte frame header followed by a fragment
// of the message body:
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
// Layout.MaxFrag bytes (the last one shorter).
const (
	// HeaderLength is the length of the frame header at the start of
	// every framed record's payload.
	HeaderLength = mailboxdef.HeaderLength
	// partLengthPrefix is the length of the prefix of each part in the
	// body of a multipart message.
	partLengthPrefix = mailboxdef.PartLengthPrefix
	// reservedTypeBits are the type id bits a valid record may set only
	// as record.FlagFramed: all the record core's flag bits (a mailbox has
	// no fragment BEGIN or END: its framed records carry their index).
	reservedTypeBits = record.FlagBits
)

// Header is a decoded frame header.
type Header struct {
	Key     int64
	Seq     uint64
	Index   uint32
	Count   uint32
	BodyLen uint32
	Parts   uint32
}

// PutHeader encodes h at the start of b, which must be at least
// HeaderLength bytes long.
func PutHeader(b []byte, h *Header) {
	_ = b[HeaderLength-1]
	binary.LittleEndian.PutUint64(b[mailboxdef.KeyOffset:], uint64(h.Key))
	binary.LittleEndian.PutUint64(b[mailboxdef.SequenceOffset:], h.Seq)
	binary.LittleEndian.PutUint32(b[mailboxdef.IndexOffset:], h.Index)
	binary.LittleEndian.PutUint32(b[mailboxdef.CountOffset:], h.Count)
	binary.LittleEndian.PutUint32(b[mailboxdef.BodyLengthOffset:], h.BodyLen)
	binary.LittleEndian.PutUint32(b[mailboxdef.PartsOffset:], h.Parts)
}

// ReadHeader decodes the header at the start of b, which must be at
// least HeaderLength bytes long (callers check).
func ReadHeader(b []byte, h *Header) {
	_ = b[HeaderLength-1]
	h.Key = int64(binary.LittleEndian.Uint64(b[mailboxdef.KeyOffset:]))
	h.Seq = binary.LittleEndian.Uint64(b[mailboxdef.SequenceOffset:])
	h.Index = binary.LittleEndian.Uint32(b[mailboxdef.IndexOffset:])
	h.Count = binary.LittleEndian.Uint32(b[mailboxdef.CountOffset:])
	h.BodyLen = binary.LittleEndian.Uint32(b[mailboxdef.BodyLengthOffset:])
	h.Parts = binary.LittleEndian.Uint32(b[mailboxdef.PartsOffset:])
}

// SameMessage reports whether h is a later record of the message whose
// first record is first.
func (h *Header) SameMessage(first *Header) bool {
	return h.Key == first.Key && h.Seq == first.Seq && h.Count == first.Count &&
		h.BodyLen == first.BodyLen && h.Parts == first.Parts
}

// Class is what a record's type id says it is.
type Class uint8

const (
	// Plain is a plain record: the type id is the user's.
	Plain Class = iota
	// Framed is a framed record: a frame header, then a fragment.
	Framed
	// Invalid is a type id no sender writes.
	Invalid
)

// Classify splits a record type id (>= 1, as the ring guarantees, without
// record.FlagChecked) into its class and the user type id.
func Classify(recordType int32) (Class, int32) {
	if recordType <= record.MaxTypeID {
		return Plain, recordType
	}
	user := recordType & record.MaxTypeID
	if recordType&reservedTypeBits != record.FlagFramed || user == 0 {
		return Invalid, 0
	}
	return Framed, user
}

// BodyLength returns the body length of a message with the given parts:
// the payload for one part, length-prefixed parts for more.
func BodyLength(parts [][]byte) int {
	if len(parts) == 1 {
		return len(parts[0])
	}
	n := 0
	for _, p := range parts {
		n += partLengthPrefix + len(p)
	}
	return n
}

// Layout is the framing geometry of one mailbox, fixed by its ring and
// whether its records carry a checksum.
type Layout struct {
	MaxRecord  int  // payload bytes of one record: the ring's MaxMessageLength
	Over       int  // bytes of every record's payload before its body or frame header: mailboxdef.ChecksumLength, or 0
	MaxFrag    int  // body bytes of one framed record
	MaxBatch   int  // bytes of the largest batch a message may claim
	MaxMessage int  // largest body length
	MaxRecords int  // most records of one message
	Checked    bool // every record is sealed (Seal) and verified (Verify)
}

// NewLayout returns the layout of a mailbox whose ring has capacity bytes
// of records, each of at most maxRecord payload bytes, with messages of at
// most maxMessage bytes (0: as large as half the ring allows), checksummed
// or not.
func NewLayout(capacity, maxRecord, maxMessage int, checksum bool) Layout {
	l := Layout{MaxRecord: maxRecord, MaxBatch: capacity / 2, Checked: checksum}
	if checksum {
		l.Over = mailboxdef.ChecksumLength
	}
	head := l.Over + HeaderLength // a framed record's payload before its fragment
	l.MaxFrag = maxRecord - head
	full := l.MaxBatch / record.Size(maxRecord) // records of MaxFrag body bytes
	l.MaxMessage = full * l.MaxFrag
	if rest := l.MaxBatch - full*record.Size(maxRecord); rest >= record.Size(head+1) {
		l.MaxMessage += (rest-record.HeaderLength)&^(record.Alignment-1) - head
	}
	if maxMessage > 0 && maxMessage < l.MaxMessage {
		l.MaxMessage = maxMessage
	}
	l.MaxRecords = (l.MaxMessage + l.MaxFrag - 1) / l.MaxFrag
	return l
}

// Records returns the record count and the batch size of a framed message
// with a body of bodyLen bytes.
func (l *Layout) Records(bodyLen int) (count, size int) {
	count = (bodyLen + l.MaxFrag - 1) / l.MaxFrag
	if count == 0 {
		count = 1
	}
	last := bodyLen - (count-1)*l.MaxFrag
	size = (count-1)*record.Size(l.MaxRecord) + record.Size(l.Over+HeaderLength+last)
	return count, size
}
