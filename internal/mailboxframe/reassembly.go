package mailboxframe

import (
	"encoding/binary"

	"github.com/dutyrt/duty/internal/record"
)

// CheckFirst returns why h, the frame header of what should be a
// message's first record, is not one a correct sender writes with layout l
// and at most maxParts parts, or "".
func (l *Layout) CheckFirst(h *Header, maxParts int) string {
	switch {
	case h.Index != 0:
		return "fragment without its first record"
	case h.Count == 0 || int(h.Count) > l.MaxRecords:
		return "record count out of range"
	case h.Parts == 0 || int(h.Parts) > maxParts:
		return "part count out of range"
	case int(h.BodyLen) > l.MaxMessage:
		return "body longer than MaxMessageSize"
	}
	return ""
}

// SplitParts splits body, the body of a message of n >= 2 parts, into its
// length-prefixed parts, appended to (*parts)[:0], and returns them; false
// if the part lengths do not add up to the body. *parts keeps any growth:
// a consumer allocates only when a message has more parts than any
// before.
func SplitParts(body []byte, n uint32, parts *[][]byte) ([][]byte, bool) {
	if uint64(n)*partLengthPrefix > uint64(len(body)) {
		return nil, false
	}
	ps := (*parts)[:0]
	rest := body
	for range n {
		if len(rest) < partLengthPrefix {
			return nil, false
		}
		l := binary.LittleEndian.Uint32(rest)
		rest = rest[partLengthPrefix:]
		if uint64(l) > uint64(len(rest)) {
			return nil, false
		}
		ps = append(ps, rest[:l:l])
		rest = rest[l:]
	}
	*parts = ps
	return ps, len(rest) == 0
}

// Assemble copies the body of the multi-record message whose first record
// (of type stored, as the ring holds it, flags included; frame header h)
// has payload whole (first after its checksum prefix) into *buf, and
// returns it, or a reason why the message is corrupt. log is the ring's
// view of its records, lay the mailbox's layout, and base the ring
// position of index 0 in the lap the consumer reads (for Verify, in a
// checksummed mailbox).
//
// The whole message was published by the single store of its first
// record's length (one ring batch), which the ring's read has already
// loaded: the later records are complete and sit right after the first one,
// before the end of the ring. They are read here, before the ring's read
// reaches them, so that the consumer can deliver (or abort) the whole
// message at its first record. Every length, offset and header is checked
// (record.Check, and the framing's own rules): the ring may be shared with
// a faulty process. The records are found through the record core's view
// of the ring: the first from its payload (IndexOf), the others from their
// headers.
//
// *buf grows to the largest message seen, at most lay.MaxMessage: no
// allocation per message in the steady state.
func Assemble(buf *[]byte, log *record.Log, lay *Layout, whole, first []byte, stored int32, h *Header, base int64) ([]byte, string) {
	need := int(h.BodyLen)
	if cap(*buf) < need {
		*buf = make([]byte, max(need, min(2*cap(*buf), lay.MaxMessage)))
	}
	body := (*buf)[:need]
	frag := first[HeaderLength:]
	if len(frag) > need {
		return nil, "first fragment longer than the body"
	}
	pos := copy(body, frag)
	start, ok := log.IndexOf(whole)
	if !ok {
		return nil, "first record outside the ring" // the ring's read handed it out: never
	}
	next := start + record.Size(len(whole))
	over := lay.Over
	var g Header
	for i := uint32(1); i < h.Count; i++ {
		if next > log.Capacity()-record.HeaderLength-over-HeaderLength {
			return nil, "message runs past the end of the ring"
		}
		length := log.LengthAt(next).Load()
		// Checked as a record of the message's type (a valid type id), so
		// that Check judges the length: it covers the header and ends
		// within the ring.
		if length < int32(record.HeaderLength+over+HeaderLength) || !record.Check(next, log.Capacity(), length, stored) {
			return nil, "missing or short record in a multi-record message"
		}
		if *log.TypeAt(next) != stored {
			return nil, "record of another type inside a multi-record message"
		}
		p := log.Payload(next, int(length)-record.HeaderLength)
		if lay.Checked {
			// The records of one message are contiguous, in one lap.
			if !Verify(base+int64(next), stored, p) {
				return nil, "checksum mismatch"
			}
			p = p[over:]
		}
		ReadHeader(p, &g)
		if g.Index != i || !g.SameMessage(h) {
			return nil, "frame header does not match its message"
		}
		frag = p[HeaderLength:]
		if len(frag) > need-pos {
			return nil, "fragments longer than the body"
		}
		pos += copy(body[pos:], frag)
		next += record.Align(int(length))
	}
	if pos != need {
		return nil, "fragments shorter than the body"
	}
	return body, ""
}
