package natsbridge

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/dutyrt/duty/mailbox"
)

// The batch frame: one NATS message carries many duty messages. The layout
// is written here once; docs/natsbridge.md, "Batch frame" draws it and
// frame_test.go asserts it byte by byte. All integers are little-endian.
//
//	offset  size  field
//	0       3     magic "DNB"
//	3       1     version (frameVersion)
//	4       4     message count, >= 1
//	8       8     source id: the publishing bridge, never 0
//	16      8     batch sequence among the source's batches, from 1
//	24      8     message sequence of the batch's first message among the
//	              source's messages, from 1 (so >= the batch sequence)
//	32      4     body length: the bytes after the header
//	36      4     CRC32C (Castagnoli) of the header's first 36 bytes and
//	              the body
//	40      ...   body: count message entries, back to back
//
// A message entry:
//
//	0       4     type id, 1 .. mailbox.MaxTypeID
//	4       4     part count n, 1 .. maxParts
//	8       ...   n times: a uint32 length, then that many bytes
const (
	// frameVersion is the version byte this package writes and reads; a
	// frame of another version is refused (ErrVersion).
	frameVersion = 2
	// headerLength is the length of a batch header.
	headerLength = 40
	// entryHeaderLength is the length of a message entry's fixed part (type
	// id and part count); each part adds partPrefixLength.
	entryHeaderLength = 8
	// partPrefixLength is the length prefix of each part.
	partPrefixLength = 4
	// minBatchBytes is the smallest batch capacity: a header and one empty
	// one-part message.
	minBatchBytes = headerLength + entryHeaderLength + partPrefixLength
)

const (
	offMagic    = 0
	offVersion  = 3
	offCount    = 4
	offSource   = 8
	offSequence = 16
	offFirst    = 24
	offBodyLen  = 32
	offCRC      = 36
)

var magic = [3]byte{'D', 'N', 'B'}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// entryLength returns the bytes a message of these parts takes in a batch.
func entryLength(parts [][]byte) int {
	n := entryHeaderLength
	for _, p := range parts {
		n += partPrefixLength + len(p)
	}
	return n
}

// Header is the decoded header of a batch.
type Header struct {
	Count    int
	Source   uint64
	Sequence uint64 // the batch's sequence among its source's batches, from 1
	// First is the message sequence of the batch's first message among its
	// source's messages, from 1: the batch holds First .. First+Count-1,
	// and a receiver that sees First above the next one it expects (or
	// above 1 in a source's first batch) knows how many messages it missed.
	First uint64
}

// checksum is the frame's CRC32C: the header up to the checksum field,
// then the body, so that a damaged source, sequence or count is caught as
// a damaged message is.
func checksum(frame []byte) uint32 {
	c := crc32.Update(0, castagnoli, frame[:offCRC])
	return crc32.Update(c, castagnoli, frame[headerLength:])
}

// batch encodes messages into one frame. It owns one buffer of the capacity
// given to newBatch and allocates nothing after that: Append copies the
// parts in, Seal writes the header and returns the buffer's frame. A batch
// is not safe for concurrent use.
type batch struct {
	buf   []byte
	count int
}

// newBatch returns an empty batch whose frames are at most capacity bytes
// (>= minBatchBytes, else ErrConfig).
func newBatch(capacity int) (*batch, error) {
	if capacity < minBatchBytes || capacity > maxFrame {
		return nil, fmt.Errorf("%w: batch capacity %d outside %d..%d", ErrConfig, capacity, minBatchBytes, maxFrame)
	}
	b := &batch{buf: make([]byte, headerLength, capacity)}
	return b, nil
}

// maxSequence bounds a message sequence in a frame (2^62): far above what a
// source sends, and First+Count cannot overflow a uint64.
const maxSequence = 1 << 62

// maxFrame bounds a frame so that every length fits a uint32 and a NATS
// payload (whose server limit is far lower).
const maxFrame = 1 << 30

// Append adds one message. It returns errBatchFull, with nothing added,
// when the message does not fit the remaining capacity of a batch holding
// messages (seal and publish it, then append again), and an error wrapping
// ErrTooLarge when it does not fit even an empty batch; mailbox.ErrTypeID
// or mailbox.ErrArgument (wrapped) for a type id or part count out of range.
// errBatchFull is returned unwrapped and without allocating.
func (b *batch) Append(typeID int32, parts ...[]byte) error {
	if typeID < 1 || typeID > mailbox.MaxTypeID {
		return fmt.Errorf("%w: %d", mailbox.ErrTypeID, typeID)
	}
	if len(parts) < 1 || len(parts) > maxParts {
		return fmt.Errorf("%w: %d parts", mailbox.ErrArgument, len(parts))
	}
	n := entryLength(parts)
	if len(b.buf)+n > cap(b.buf) {
		if b.count > 0 {
			return errBatchFull
		}
		return fmt.Errorf("%w: a message of %d bytes in a batch of %d", ErrTooLarge, n, cap(b.buf))
	}
	at := len(b.buf)
	b.buf = b.buf[:at+n]
	binary.LittleEndian.PutUint32(b.buf[at:], uint32(typeID))
	binary.LittleEndian.PutUint32(b.buf[at+4:], uint32(len(parts)))
	at += entryHeaderLength
	for _, p := range parts {
		binary.LittleEndian.PutUint32(b.buf[at:], uint32(len(p)))
		at += partPrefixLength
		at += copy(b.buf[at:], p)
	}
	b.count++
	return nil
}

// Count returns the number of messages appended since the last Reset.
func (b *batch) Count() int { return b.count }

// Len returns the frame's length so far, header included.
func (b *batch) Len() int { return len(b.buf) }

// Cap returns the batch's capacity.
func (b *batch) Cap() int { return cap(b.buf) }

// Reset empties the batch.
func (b *batch) Reset() {
	b.buf = b.buf[:headerLength]
	b.count = 0
}

// Seal writes the header for source, batch sequence and first message
// sequence, and returns the frame. The slice aliases the batch's buffer: it
// is valid until the next Append or Reset. Sealing an empty batch returns a
// frame that Reader rejects.
func (b *batch) Seal(source, sequence, first uint64) []byte {
	h := b.buf[:headerLength]
	copy(h[offMagic:], magic[:])
	h[offVersion] = frameVersion
	binary.LittleEndian.PutUint32(h[offCount:], uint32(b.count))
	binary.LittleEndian.PutUint64(h[offSource:], source)
	binary.LittleEndian.PutUint64(h[offSequence:], sequence)
	binary.LittleEndian.PutUint64(h[offFirst:], first)
	binary.LittleEndian.PutUint32(h[offBodyLen:], uint32(len(b.buf)-headerLength))
	binary.LittleEndian.PutUint32(h[offCRC:], checksum(b.buf))
	return b.buf
}

// maxParts bounds the part count of one message in a frame, as the
// mailbox's default bounds it in a mailbox.
const maxParts = 1024

// Reader decodes frames. Reset checks a whole frame before the first
// message is read, so a frame is either rejected whole or read whole:
// nothing of a malformed frame reaches a mailbox. The parts Next returns
// alias the frame; the slice of parts is reused by the next call. A Reader
// allocates nothing once its parts slice has grown to the largest part
// count seen. It is not safe for concurrent use.
type Reader struct {
	frame  []byte
	at     int
	left   int
	typeID int32
	parts  [][]byte
}

// Reset checks frame and positions the reader before its first message.
// It returns an error wrapping ErrForeign for a payload that is not a
// batch frame (wrong magic, shorter than the magic and version), one
// wrapping ErrVersion for a batch frame of another version, and one
// wrapping ErrMalformed for a frame of ours that does not hold together
// (count, lengths, checksum, sequences, a type id or part count out of
// range, trailing bytes). After an error the reader holds no messages.
func (r *Reader) Reset(frame []byte) (Header, error) {
	r.frame, r.at, r.left = nil, 0, 0
	if len(frame) <= offVersion || frame[0] != magic[0] || frame[1] != magic[1] || frame[2] != magic[2] {
		return Header{}, fmt.Errorf("%w: %d bytes without the batch magic", ErrForeign, len(frame))
	}
	if v := frame[offVersion]; v != frameVersion {
		return Header{}, fmt.Errorf("%w: frame version %d, this reader reads %d", ErrVersion, v, frameVersion)
	}
	if len(frame) < headerLength {
		return Header{}, fmt.Errorf("%w: %d bytes, shorter than a header", ErrMalformed, len(frame))
	}
	h := Header{
		Count:    int(binary.LittleEndian.Uint32(frame[offCount:])),
		Source:   binary.LittleEndian.Uint64(frame[offSource:]),
		Sequence: binary.LittleEndian.Uint64(frame[offSequence:]),
		First:    binary.LittleEndian.Uint64(frame[offFirst:]),
	}
	body := frame[headerLength:]
	if bl := binary.LittleEndian.Uint32(frame[offBodyLen:]); uint64(bl) != uint64(len(body)) {
		return Header{}, fmt.Errorf("%w: body length %d in a frame of %d body bytes", ErrMalformed, bl, len(body))
	}
	if h.Source == 0 || h.Sequence == 0 || h.First < h.Sequence || h.First > maxSequence {
		// Every batch holds a message: the first message's sequence is at
		// least the batch's. The bound keeps First+Count from overflowing.
		return Header{}, fmt.Errorf("%w: source %d, sequence %d, first message %d", ErrMalformed, h.Source, h.Sequence, h.First)
	}
	if h.Count < 1 || h.Count > len(body)/(entryHeaderLength+partPrefixLength) {
		return Header{}, fmt.Errorf("%w: %d messages in %d body bytes", ErrMalformed, h.Count, len(body))
	}
	if c := binary.LittleEndian.Uint32(frame[offCRC:]); c != checksum(frame) {
		return Header{}, fmt.Errorf("%w: checksum mismatch", ErrMalformed)
	}
	at := headerLength
	for i := range h.Count {
		next, err := skipEntry(frame, at)
		if err != nil {
			return Header{}, fmt.Errorf("%w: message %d at offset %d: %s", ErrMalformed, i, at, err)
		}
		at = next
	}
	if at != len(frame) {
		return Header{}, fmt.Errorf("%w: %d bytes after the last message", ErrMalformed, len(frame)-at)
	}
	r.frame, r.at, r.left = frame, headerLength, h.Count
	return h, nil
}

// entryError is a reason, formatted by Reset only when a frame fails.
type entryError string

func (e entryError) Error() string { return string(e) }

// skipEntry checks the entry at offset at and returns the offset after it.
func skipEntry(f []byte, at int) (int, error) {
	if len(f)-at < entryHeaderLength {
		return 0, entryError("truncated entry header")
	}
	typeID := binary.LittleEndian.Uint32(f[at:])
	if typeID < 1 || typeID > uint32(mailbox.MaxTypeID) {
		return 0, entryError("type id out of range")
	}
	n := binary.LittleEndian.Uint32(f[at+4:])
	if n < 1 || n > maxParts {
		return 0, entryError("part count out of range")
	}
	at += entryHeaderLength
	for range n {
		if len(f)-at < partPrefixLength {
			return 0, entryError("truncated part length")
		}
		l := binary.LittleEndian.Uint32(f[at:])
		at += partPrefixLength
		if uint64(l) > uint64(len(f)-at) {
			return 0, entryError("part runs past the frame")
		}
		at += int(l)
	}
	return at, nil
}

// Next reads the next message; it returns false after the last one.
func (r *Reader) Next() bool {
	if r.left == 0 {
		return false
	}
	f, at := r.frame, r.at
	r.typeID = int32(binary.LittleEndian.Uint32(f[at:]))
	n := int(binary.LittleEndian.Uint32(f[at+4:]))
	at += entryHeaderLength
	r.parts = r.parts[:0]
	for range n {
		l := int(binary.LittleEndian.Uint32(f[at:]))
		at += partPrefixLength
		r.parts = append(r.parts, f[at:at+l:at+l])
		at += l
	}
	r.at = at
	r.left--
	return true
}

// Remaining returns the number of messages not read yet.
func (r *Reader) Remaining() int { return r.left }

// TypeID returns the current message's type id.
func (r *Reader) TypeID() int32 { return r.typeID }

// Parts returns the current message's parts (one for a plain message).
func (r *Reader) Parts() [][]byte { return r.parts }
