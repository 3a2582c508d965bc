package journal

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/dutyrt/duty/internal/journalfile"
)

// maxRecordParts bounds the parts of one multipart record: a writer
// refuses more, a reader takes more for corruption. It bounds what a
// reader's Parts may append however large the record.
const maxRecordParts = 1 << 16

// A multipart record (flag RecordParts) carries a message of several parts
// so that a replay sends the same parts, not their concatenation. Its body
// is a part table, then the parts' bytes:
//
//	offset     size     field
//	0          4        part count n (2..MaxRecordParts)
//	4          4 × n    each part's length, in order
//	4 + 4n     ...      the parts, back to back
//
// The body's length is exactly the table's plus the parts'. A message of
// one part is a plain record.

// partsBodyLength returns the body length of a record holding parts.
func partsBodyLength(parts [][]byte) (int, error) {
	if len(parts) > maxRecordParts {
		return 0, fmt.Errorf("%w: %d parts (at most %d)", ErrArgument, len(parts), maxRecordParts)
	}
	n := 4 + 4*len(parts)
	for _, p := range parts {
		n += len(p)
	}
	return n, nil
}

// AppendParts appends a message of several parts (at most 65,536) as one
// record, flagged multipart (Record.Parts gives the parts back); one part or none makes
// a plain record of their bytes. It allocates nothing.
func (s *Stream) AppendParts(typeID int32, parts ...[]byte) (position, sequence int64, err error) {
	return s.appendParts(typeID, parts, s.j.opts.Clock())
}

// AppendParts is Stream.AppendParts on streamID.
func (j *Journal) AppendParts(streamID uint32, typeID int32, parts ...[]byte) (position, sequence int64, err error) {
	if j.readOnly {
		return 0, 0, ErrReadOnly
	}
	return j.stream(streamID).appendParts(typeID, parts, j.opts.Clock())
}

// appendParts is AppendParts stamped timestamp.
func (s *Stream) appendParts(typeID int32, parts [][]byte, timestamp int64) (position, sequence int64, err error) {
	j := s.j
	if len(parts) < 2 {
		var body []byte
		if len(parts) == 1 {
			body = parts[0]
		}
		return s.appendCopy(typeID, body, timestamp)
	}
	n, err := partsBodyLength(parts)
	if err != nil {
		return 0, 0, err
	}
	c, err := s.ClaimAt(typeID, n, timestamp)
	if err != nil {
		return 0, 0, err
	}
	le := binary.LittleEndian
	j.claim.flags = journalfile.RecordParts // the header's, written by Commit
	b := c.Body()
	le.PutUint32(b, uint32(len(parts)))
	for i, p := range parts {
		le.PutUint32(b[4+4*i:], uint32(len(p)))
	}
	b = b[4+4*len(parts):]
	for _, p := range parts {
		b = b[copy(b, p):]
	}
	if err := j.Commit(); err != nil {
		if errors.Is(err, ErrNotDurable) { // committed: where it is
			return c.Position, c.Sequence, err
		}
		return 0, 0, err
	}
	return c.Position, c.Sequence, nil
}

// Parts appends the record's parts to dst[:0] and returns it: the parts
// of a multipart record (each aliasing the body, valid as long as Body
// is), or Body alone for a plain record. With dst's capacity enough for
// the parts it allocates nothing. A part table that does not describe the
// body exactly is an error wrapping ErrCorrupt (and duty.ErrCorrupt).
func (r *Record) Parts(dst [][]byte) ([][]byte, error) {
	dst = dst[:0]
	if r.Flags&journalfile.RecordParts == 0 {
		return append(dst, r.Body), nil
	}
	b := r.Body
	le := binary.LittleEndian
	if len(b) < 4 {
		return dst, r.partsError("no part count")
	}
	n := le.Uint32(b)
	if n < 2 || n > maxRecordParts {
		return dst, r.partsError(fmt.Sprintf("part count %d", n))
	}
	table := 4 + 4*int(n)
	if len(b) < table {
		return dst, r.partsError(fmt.Sprintf("%d parts, a body of %d bytes", n, len(b)))
	}
	off := table
	for i := range int(n) {
		l := int(le.Uint32(b[4+4*i:]))
		if l > len(b)-off {
			return dst[:0], r.partsError(fmt.Sprintf("part %d of %d bytes, %d left", i, l, len(b)-off))
		}
		dst = append(dst, b[off:off+l:off+l])
		off += l
	}
	if off != len(b) {
		return dst[:0], r.partsError(fmt.Sprintf("%d bytes after the last part", len(b)-off))
	}
	return dst, nil
}

// partsError is a bad part table: a corruptError naming the record.
func (r *Record) partsError(reason string) error {
	return &corruptError{Position: r.Position, Reason: "multipart record: " + reason}
}
