package zmtp

import (
	"github.com/dutyrt/duty/internal/zmtpqueue"
	"github.com/dutyrt/duty/internal/zmtpwire"
)

// A slot holds a received message, copied: its bytes and its parts, which
// alias them. Both grow to the largest message it carried and are reused.
type slot struct {
	data  []byte
	parts [][]byte
}

// next puts the next message of the buffer taken from the queue into m,
// and returns the bytes of the buffer it took: a large message's buffer
// becomes m's (no copy), and m's buffer of an earlier large message goes
// back to q for reuse; any other is copied (nextMessage).
func (rc *recvCache) next(m *slot, q *zmtpqueue.In) {
	if rc.buf[rc.off] != zmtpqueue.BigMark {
		rc.off += nextMessage(rc.buf[rc.off:], m)
		return
	}
	rc.off++
	b := rc.bigs[rc.bi]
	rc.bigs[rc.bi] = nil
	rc.bi++
	if rc.bi == len(rc.bigs) {
		rc.bigs, rc.bi = rc.bigs[:0], 0
	}
	q.PutBig(m.data)
	m.data = b
	m.parts = m.parts[:0]
	for off := 0; off < len(b); {
		f := b[off]
		size, h := zmtpwire.FrameSize(b[off:])
		m.parts = append(m.parts, b[off+h:off+h+size:off+h+size])
		off += h + size
		if f&zmtpwire.FlagMore == 0 {
			break
		}
	}
}

// nextMessage parses the message at the start of b, frames the decoder
// checked (no command, sizes within b), into m's buffers: parts copied
// into m's data. It returns the bytes the message took.
func nextMessage(b []byte, m *slot) int {
	if b[0] == 0 {
		// One short frame: the common small message.
		size := int(b[1])
		if cap(m.data) < size {
			m.data = make([]byte, size)
		}
		m.data = m.data[:size]
		copy(m.data, b[zmtpwire.ShortHeader:])
		m.parts = append(m.parts[:0], m.data[:size:size])
		return zmtpwire.ShortHeader + size
	}
	// First pass: the body bytes, to size m's buffer once.
	total, off := 0, 0
	for {
		f := b[off]
		size, h := zmtpwire.FrameSize(b[off:])
		total += size
		off += h + size
		if f&zmtpwire.FlagMore == 0 {
			break
		}
	}
	if cap(m.data) < total {
		m.data = make([]byte, total)
	}
	m.data = m.data[:total]
	m.parts = m.parts[:0]
	d, off := 0, 0
	for {
		f := b[off]
		size, h := zmtpwire.FrameSize(b[off:])
		copy(m.data[d:], b[off+h:off+h+size])
		m.parts = append(m.parts, m.data[d:d+size:d+size])
		d += size
		off += h + size
		if f&zmtpwire.FlagMore == 0 {
			return off
		}
	}
}

// copyParts copies a message's parts into the slot, after a routing id
// part when id is not nil.
func (m *slot) copyParts(id []byte, parts [][]byte) {
	total := len(id)
	for _, p := range parts {
		total += len(p)
	}
	if cap(m.data) < total {
		m.data = make([]byte, total)
	}
	m.data = m.data[:total]
	m.parts = m.parts[:0]
	d := 0
	if id != nil {
		d = copy(m.data, id)
		m.parts = append(m.parts, m.data[:d:d])
	}
	for _, p := range parts {
		e := d + copy(m.data[d:], p)
		m.parts = append(m.parts, m.data[d:e:e])
		d = e
	}
}
