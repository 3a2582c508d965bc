package mailbox

import (
	"encoding/binary"

	"github.com/dutyrt/duty/internal/record"
)

// Message is one message handed to a Handler. Its slices alias the ring
// (a message of one record) or the mailbox's reassembly buffer (a message
// of several records): they are valid only until the handler returns and
// must not be modified or retained; copy what must outlive the call.
type Message struct {
	typeID int32
	framed bool
	one    [1][]byte
	parts  [][]byte
	key    int64
	seq    uint64
}

// TypeID returns the message's type id (1..MaxTypeID).
func (m *Message) TypeID() int32 { return m.typeID }

// Payload returns the message's payload: its only part, or the first part
// of a multipart message.
func (m *Message) Payload() []byte { return m.parts[0] }

// NumParts returns the number of parts: 1 unless the message was sent with
// SendParts or ClaimParts with several parts.
func (m *Message) NumParts() int { return len(m.parts) }

// Part returns part i. It panics if i is out of range, as indexing does.
func (m *Message) Part(i int) []byte { return m.parts[i] }

// Parts returns all the parts. The slice itself is reused by the mailbox:
// like the parts, it is valid only during the handler call.
func (m *Message) Parts() [][]byte { return m.parts }

// setPlain points the message at a plain record. The fast path in
// consumer.init does the same when the message is already plain.
func (m *Message) setPlain(typeID int32, payload []byte) {
	if m.framed {
		m.framed, m.key, m.seq = false, 0, 0
	}
	m.typeID = typeID
	m.one[0] = payload
	m.parts = m.one[:]
}

// setFramed points the message at body, split into its parts; parts is
// the reusable slice of part headers. It reports false, leaving the
// message unusable, if the body's part lengths do not add up.
func (m *Message) setFramed(typeID int32, body []byte, h *frameHeader, parts *[][]byte) bool {
	m.typeID, m.framed, m.key, m.seq = typeID, true, h.key, h.seq
	if h.parts == 1 {
		m.one[0] = body
		m.parts = m.one[:]
		return true
	}
	if uint64(h.parts)*partLengthPrefix > uint64(len(body)) {
		return false
	}
	ps := (*parts)[:0]
	rest := body
	for range h.parts {
		if len(rest) < partLengthPrefix {
			return false
		}
		l := binary.LittleEndian.Uint32(rest)
		rest = rest[partLengthPrefix:]
		if uint64(l) > uint64(len(rest)) {
			return false
		}
		ps = append(ps, rest[:l:l])
		rest = rest[l:]
	}
	*parts = ps // keep any growth: allocation only when a message has more parts than ever seen
	if len(rest) != 0 {
		return false
	}
	m.parts = ps
	return true
}

// assemble copies the body of the multi-record message whose first record
// (of type recordType, frame header h) has payload first into the
// reassembly buffer, and returns it, or a reason why the message is
// corrupt.
//
// The whole message was published by the single store of its first
// record's length (one ring batch), which the ring's read has already
// loaded: the later records are complete and sit right after the first one,
// before the end of the ring. They are read here, before the ring's read
// reaches them, so that the receiver can deliver (or abort) the whole
// message at its first record. Every length, offset and header is checked
// (record.Check, and the framing's own rules): the ring may be shared with
// a faulty process. The records are found through the record core's view
// of the ring (record.Log): the first from its payload (IndexOf), the
// others from their headers.
func (c *consumer) assemble(whole, first []byte, recordType int32, h *frameHeader) ([]byte, string) {
	m := c.mb
	need := int(h.bodyLen)
	if cap(c.reasm) < need {
		// Grows to the largest message seen, at most MaxMessageSize: no
		// allocation per message in the steady state.
		c.reasm = make([]byte, max(need, min(2*cap(c.reasm), m.lay.maxMessage)))
	}
	body := c.reasm[:need]
	frag := first[frameHeaderLength:]
	if len(frag) > need {
		return nil, "first fragment longer than the body"
	}
	pos := copy(body, frag)
	log := &c.rd.Log
	start, ok := log.IndexOf(whole)
	if !ok {
		return nil, "first record outside the ring" // the ring's read handed it out: never
	}
	next := start + record.Size(len(whole))
	over, stored := m.lay.over, recordType|m.checkFlag() // the type id as the ring holds it
	var g frameHeader
	for i := uint32(1); i < h.count; i++ {
		if next > log.Capacity()-record.HeaderLength-over-frameHeaderLength {
			return nil, "message runs past the end of the ring"
		}
		length := log.LengthAt(next).Load()
		// Checked as a record of the message's type (a valid type id), so
		// that Check judges the length: it covers the header and ends
		// within the ring.
		if length < int32(record.HeaderLength+over+frameHeaderLength) || !record.Check(next, log.Capacity(), length, stored) {
			return nil, "missing or short record in a multi-record message"
		}
		if *log.TypeAt(next) != stored {
			return nil, "record of another type inside a multi-record message"
		}
		p := log.Payload(next, int(length)-record.HeaderLength)
		if m.checksum {
			// The records of one message are contiguous, in one lap.
			if !verify(c.positionOf(start)+int64(next-start), stored, p) {
				return nil, "checksum mismatch"
			}
			p = p[over:]
		}
		readFrameHeader(p, &g)
		if g.index != i || !g.sameMessage(h) {
			return nil, "frame header does not match its message"
		}
		frag = p[frameHeaderLength:]
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
