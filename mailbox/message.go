package mailbox

import (
	"github.com/dutyrt/duty/internal/mailboxdef"
	"github.com/dutyrt/duty/internal/mailboxframe"
	"github.com/dutyrt/duty/internal/record"
)

// A message travels as one plain record (its type id the user's) or as a
// batch of framed records, published together: internal/mailboxframe
// reads and writes the framed records (the frame header, the layout, the
// checksum prefix, reassembly); docs/mailbox.md explains the framing.
const (
	// MaxTypeID is the largest user type id (the record core's,
	// internal/record). The bits above it are reserved for the framing.
	MaxTypeID = record.MaxTypeID
	// framedFlag marks the type id of a framed record: framedFlag|typeID.
	framedFlag = record.FlagFramed
	// checkedFlag marks a checksummed record's type id.
	checkedFlag = record.FlagChecked
	// frameHeaderLength is the length of the frame header at the start of
	// every framed record's payload.
	frameHeaderLength = mailboxdef.HeaderLength
	// partLengthPrefix is the length of the prefix of each part in the
	// body of a multipart message.
	partLengthPrefix = mailboxdef.PartLengthPrefix
	// checksumLength is the length of the checksum prefix of a
	// checksummed record's payload.
	checksumLength = mailboxdef.ChecksumLength
	// minCapacity is the smallest ring capacity a mailbox accepts: its
	// records must carry a frame header and a useful fragment.
	minCapacity = mailboxdef.MinCapacity
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
func (m *Message) setFramed(typeID int32, body []byte, h *mailboxframe.Header, parts *[][]byte) bool {
	m.typeID, m.framed, m.key, m.seq = typeID, true, h.Key, h.Seq
	if h.Parts == 1 {
		m.one[0] = body
		m.parts = m.one[:]
		return true
	}
	ps, ok := mailboxframe.SplitParts(body, h.Parts, parts)
	if !ok {
		return false
	}
	m.parts = ps
	return true
}
