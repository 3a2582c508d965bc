// Package zmtpwire is ZMTP 3.1's wire (docs/zmtp.md, "Framing" and
// "Greeting"): frames and their Encoder and Decoder, the greeting, READY's
// metadata and command bodies, and the vectored write of a connection.
// Package zmtp's sockets speak through it; nothing here keeps state beyond
// one connection's encoder or decoder.
package zmtpwire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
)

// Frame layout (docs/zmtp.md, "Framing"): a flags byte, then the body size
// in one byte (LONG clear) or eight bytes, big-endian (LONG set), then the
// body.
const (
	FlagMore     = 0x01 // another frame of the same message follows
	FlagLong     = 0x02 // the size field is 8 bytes
	FlagCommand  = 0x04 // the frame is a command, not message data
	FlagReserved = 0xf8 // bits a correct peer leaves zero

	ShortHeader = 2 // flags + 1-byte size
	LongHeader  = 9 // flags + 8-byte size
	// MaxShort is the largest body a short frame carries.
	MaxShort = 255
)

// DefaultRefMin is the body size from which the Encoder hands a body to
// the socket by reference instead of copying it into its write buffer.
const DefaultRefMin = 8 << 10

// An Encoder turns messages and commands into ZMTP frames and writes them
// with one vectored write. Frame headers and bodies shorter than its
// reference threshold are packed into its own write buffer; a larger body
// is handed to the writer as it is, by reference, without a copy. The
// caller keeps every referenced body unchanged until WriteTo returns.
//
// An Encoder is used by one goroutine at a time; its buffers grow to the
// largest batch seen and are reused, so encoding allocates nothing in the
// steady state.
type Encoder struct {
	buf    []byte
	segs   []segment
	vec    net.Buffers
	back   [][]byte
	refMin int
}

// A segment is a run of the write buffer (ref nil) or a referenced body.
type segment struct {
	off, end int
	ref      []byte
}

// NewEncoder returns an Encoder that references bodies of refMin bytes or
// more (DefaultRefMin if refMin <= 0).
func NewEncoder(refMin int) *Encoder {
	if refMin <= 0 {
		refMin = DefaultRefMin
	}
	return &Encoder{refMin: refMin, buf: make([]byte, 0, 16<<10)}
}

// Len returns the number of bytes encoded and not yet written.
func (e *Encoder) Len() int {
	n := len(e.buf)
	for i := range e.segs {
		n += len(e.segs[i].ref)
	}
	return n
}

// Message encodes a message of one or more parts: every part but the last
// carries MORE. A message without parts is encoded as one empty frame.
func (e *Encoder) Message(parts ...[]byte) {
	if len(parts) == 0 {
		e.frame(0, nil)
		return
	}
	last := len(parts) - 1
	for i, p := range parts {
		var f byte
		if i < last {
			f = FlagMore
		}
		e.frame(f, p)
	}
}

// Command encodes a command frame: the name's length, the name, then the
// data, the concatenation of data's slices.
func (e *Encoder) Command(name string, data ...[]byte) {
	n := 1 + len(name)
	for _, d := range data {
		n += len(d)
	}
	e.header(FlagCommand, n)
	e.buf = append(e.buf, byte(len(name)))
	e.buf = append(e.buf, name...)
	for _, d := range data {
		e.body(d)
	}
}

func (e *Encoder) frame(flags byte, body []byte) {
	e.header(flags, len(body))
	e.body(body)
}

func (e *Encoder) header(flags byte, n int) {
	if n > MaxShort {
		e.buf = append(e.buf, flags|FlagLong)
		e.buf = binary.BigEndian.AppendUint64(e.buf, uint64(n))
		return
	}
	e.buf = append(e.buf, flags, byte(n))
}

func (e *Encoder) body(b []byte) {
	if len(b) < e.refMin {
		e.buf = append(e.buf, b...)
		return
	}
	// Close the packed run so far, then reference the body.
	e.cut()
	e.segs = append(e.segs, segment{ref: b})
}

// cut records the write buffer's bytes since the last segment as a
// segment of their own.
func (e *Encoder) cut() {
	start := 0
	for i := len(e.segs) - 1; i >= 0; i-- {
		if e.segs[i].ref == nil {
			start = e.segs[i].end
			break
		}
	}
	if len(e.buf) > start {
		e.segs = append(e.segs, segment{off: start, end: len(e.buf)})
	}
}

// WriteTo writes everything encoded since the last WriteTo to w, with one
// vectored write (writev) where w is a network connection, and empties the
// Encoder. On error the Encoder is emptied too: what was not written is
// lost with the connection.
func (e *Encoder) WriteTo(w io.Writer) (int64, error) {
	e.vec = e.Vector()
	var n int64
	var err error
	if len(e.vec) == 1 {
		var m int
		m, err = w.Write(e.vec[0])
		n = int64(m)
	} else if len(e.vec) > 1 {
		n, err = e.vec.WriteTo(w)
	}
	e.vec = nil
	e.Reset()
	return n, err
}

// Vector returns what was encoded as the buffers of one vectored write:
// runs of the write buffer and referenced bodies, in order. They stay
// valid until Reset; the caller that writes them itself calls Reset after.
func (e *Encoder) Vector() [][]byte {
	e.cut()
	e.back = e.back[:0]
	for _, s := range e.segs {
		if s.ref != nil {
			e.back = append(e.back, s.ref)
		} else {
			e.back = append(e.back, e.buf[s.off:s.end])
		}
	}
	return e.back
}

// Reset empties the Encoder.
func (e *Encoder) Reset() {
	clear(e.back) // drop the references to the caller's bodies
	e.back = e.back[:0]
	clear(e.segs)
	e.segs = e.segs[:0]
	e.buf = e.buf[:0]
}

// DefaultMaxMessageSize bounds a message's body bytes (all parts) and a
// command's size where a Decoder is given no bound.
const DefaultMaxMessageSize = 16 << 20

// DefaultMaxParts bounds the frames of one multipart message where a
// Decoder is given no bound.
const DefaultMaxParts = 1024

// decoder states: what the next bytes of the stream are.
type decState uint8

const (
	stFlags decState = iota
	stSize1
	stSize8
	stBody
)

// Kind tells what Decoder.Next decoded.
type Kind uint8

const (
	KindMessage Kind = iota + 1 // Parts holds a whole message
	KindCommand                 // Command holds a command frame's body
)

// A Decoder reads ZMTP frames from a byte stream into its own buffer and
// returns whole messages and commands. It is a state machine over the
// stream (flags, size, body, per frame), fed by reads into its buffer.
//
// Parts of a message alias the buffer: they are valid until the next call
// to Next, and are never copied. A message is returned only when all its
// frames have arrived; a stream that ends within a message returns
// io.ErrUnexpectedEOF and nothing of it.
//
// The decoder refuses, from the size field alone, a frame that would take
// a message's body bytes above maxMessage or its frame count above
// maxParts (ErrTooLarge), and bytes no peer may send (ErrProtocol). Its
// buffer grows with the bytes that actually arrive, never with what a
// size field announces, so it stays below BufferBound.
type Decoder struct {
	r io.Reader

	buf  []byte
	pos  int // next byte to parse
	w    int // end of the bytes read
	keep int // first byte the current message or command needs

	state  decState
	flags  byte
	size   int
	total  int // body bytes of the message so far
	spans  []span
	parts  [][]byte
	cmd    []byte
	maxMsg int
	maxPts int
	readN  int
	noRead bool // NextBuffered: fill does not read
}

type span struct{ off, end int }

// ReadChunk is the least room a read is offered.
const ReadChunk = 64 << 10

// NewDecoder returns a Decoder reading from r that bounds a message's body
// bytes by maxMessage and its frames by maxParts (the defaults where <= 0).
func NewDecoder(r io.Reader, maxMessage, maxParts int) *Decoder {
	if maxMessage <= 0 {
		maxMessage = DefaultMaxMessageSize
	}
	if maxParts <= 0 {
		maxParts = DefaultMaxParts
	}
	return &Decoder{r: r, maxMsg: maxMessage, maxPts: maxParts, buf: make([]byte, ReadChunk)}
}

// BufferBound is the largest buffer a Decoder with these bounds ever
// holds: the largest message with its frame headers, plus a read's room.
func BufferBound(maxMessage, maxParts int) int {
	return 2 * (maxMessage + maxParts*LongHeader + ReadChunk)
}

// BufferLen returns the size of the decoder's buffer now.
func (d *Decoder) BufferLen() int { return len(d.buf) }

// Partial reports whether the decoder holds the start of a message or
// command that has not arrived whole: after an error, whether the stream
// ended within one.
func (d *Decoder) Partial() bool { return d.w > d.keep || d.state != stFlags }

// Parts returns the message Next decoded; valid until the next call.
func (d *Decoder) Parts() [][]byte { return d.parts }

// Raw returns the frames of the message or command Next or NextBuffered
// decoded, as they came on the wire; valid until the next call.
func (d *Decoder) Raw() []byte { return d.buf[d.keep:d.pos] }

// Command returns the body of the command frame Next decoded (name length,
// name, data); valid until the next call.
func (d *Decoder) Command() []byte { return d.cmd }

// Buffered returns the bytes the Decoder read and has not decoded yet:
// what a handshake's decoder read past its last command belongs to the
// stream that follows.
func (d *Decoder) Buffered() []byte { return d.buf[d.pos:d.w] }

// Next decodes the next message or command. It returns io.EOF when the
// stream ends between messages, an error wrapping io.ErrUnexpectedEOF when
// it ends within one, ErrTooLarge or ErrProtocol (wrapped) for a peer that
// breaks the bounds or the protocol, or the reader's error. After an error
// the Decoder is not used again.
func (d *Decoder) Next() (Kind, error) {
	d.keep = d.pos
	d.total = 0
	d.spans = d.spans[:0]
	if d.short() {
		return KindMessage, nil
	}
	k, err := d.next()
	if err == ErrInterrupted {
		// The read was interrupted, not the stream: rewind to the start
		// of the message, whose bytes stay buffered, for the next Next.
		d.pos, d.state = d.keep, stFlags
	}
	return k, err
}

// NextBuffered is Next without reading: it decodes the next message or
// command if all of it is in the buffer already, and otherwise returns
// false and leaves the buffered bytes for Next. A reader drains with it
// what one read brought before it hands the messages on.
func (d *Decoder) NextBuffered() (Kind, bool, error) {
	d.keep = d.pos
	d.total = 0
	d.spans = d.spans[:0]
	if d.short() {
		return KindMessage, true, nil
	}
	d.noRead = true
	k, err := d.next()
	d.noRead = false
	if err == errNotBuffered {
		// Rewind to the start of the message: its bytes stay buffered.
		d.pos, d.state = d.keep, stFlags
		return 0, false, nil
	}
	return k, err == nil, err
}

// NextShorts decodes, without reading, up to max messages of one short
// frame each that follow in the buffer, and returns their frames as they
// came on the wire and their count: the bulk of a stream of small
// messages, decoded in one pass. It stops at anything else, which Next or
// NextBuffered decodes.
func (d *Decoder) NextShorts(max int) ([]byte, int) {
	if d.state != stFlags {
		return nil, 0
	}
	start, pos, n := d.pos, d.pos, 0
	lim := min(d.maxMsg, MaxShort)
	for n < max && d.w-pos >= ShortHeader && d.buf[pos] == 0 {
		size := int(d.buf[pos+1])
		if size > lim || d.w-pos < ShortHeader+size {
			break
		}
		pos += ShortHeader + size
		n++
	}
	d.keep, d.pos = pos, pos
	return d.buf[start:pos], n
}

// errNotBuffered stops NextBuffered where Next would read.
var errNotBuffered = errors.New("zmtp: not buffered")

// short decodes, when it is buffered whole, a message of one short frame
// (the common small message) without going through the state machine.
func (d *Decoder) short() bool {
	if d.state != stFlags || d.w-d.pos < ShortHeader {
		return false
	}
	f, n := d.buf[d.pos], int(d.buf[d.pos+1])
	if f != 0 || d.w-d.pos < ShortHeader+n || n > d.maxMsg {
		return false
	}
	start := d.pos + ShortHeader
	d.pos = start + n
	d.parts = append(d.parts[:0], d.buf[start:d.pos])
	return true
}

func (d *Decoder) next() (Kind, error) {
	for {
		switch d.state {
		case stFlags:
			if err := d.fill(1); err != nil {
				return 0, err
			}
			f := d.buf[d.pos]
			if f&FlagReserved != 0 {
				return 0, fmt.Errorf("%w: reserved flag bits %#02x", ErrProtocol, f)
			}
			if f&FlagCommand != 0 {
				if f&FlagMore != 0 {
					return 0, fmt.Errorf("%w: command frame with MORE", ErrProtocol)
				}
				if len(d.spans) > 0 {
					return 0, fmt.Errorf("%w: command within a multipart message", ErrProtocol)
				}
			}
			d.flags = f
			d.pos++
			if f&FlagLong != 0 {
				d.state = stSize8
			} else {
				d.state = stSize1
			}
		case stSize1:
			if err := d.fill(1); err != nil {
				return 0, err
			}
			if err := d.setSize(uint64(d.buf[d.pos])); err != nil {
				return 0, err
			}
			d.pos++
		case stSize8:
			if err := d.fill(8); err != nil {
				return 0, err
			}
			if err := d.setSize(binary.BigEndian.Uint64(d.buf[d.pos:])); err != nil {
				return 0, err
			}
			d.pos += 8
		case stBody:
			if err := d.fill(d.size); err != nil {
				return 0, err
			}
			start := d.pos
			d.pos += d.size
			d.state = stFlags
			if d.flags&FlagCommand != 0 {
				d.cmd = d.buf[start:d.pos]
				return KindCommand, nil
			}
			d.spans = append(d.spans, span{start - d.keep, d.pos - d.keep})
			if d.flags&FlagMore == 0 {
				d.parts = d.parts[:0]
				for _, s := range d.spans {
					d.parts = append(d.parts, d.buf[d.keep+s.off:d.keep+s.end])
				}
				return KindMessage, nil
			}
		}
	}
}

func (d *Decoder) setSize(n uint64) error {
	if d.flags&FlagCommand == 0 && len(d.spans)+1 > d.maxPts {
		return fmt.Errorf("%w: more than %d frames", ErrTooLarge, d.maxPts)
	}
	if n > uint64(d.maxMsg-d.total) {
		if n > math.MaxInt64 {
			return fmt.Errorf("%w: frame of %d bytes announced", ErrTooLarge, n)
		}
		return fmt.Errorf("%w: frame of %d bytes after %d, maximum %d", ErrTooLarge, n, d.total, d.maxMsg)
	}
	d.size = int(n)
	d.total += d.size
	d.state = stBody
	return nil
}

// fill makes sure n bytes from pos are in the buffer, reading as many as
// the reader gives.
func (d *Decoder) fill(n int) error {
	for d.w-d.pos < n {
		if d.noRead {
			return errNotBuffered
		}
		if len(d.buf)-d.w < n-(d.w-d.pos) || len(d.buf)-d.w < ReadChunk/4 {
			d.makeRoom(n)
		}
		m, err := d.r.Read(d.buf[d.w:])
		d.w += m
		d.readN += m
		if d.w-d.pos >= n {
			return nil
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				if d.w == d.keep && d.state == stFlags {
					return io.EOF
				}
				return fmt.Errorf("zmtp: stream ended within a frame: %w", io.ErrUnexpectedEOF)
			}
			return err
		}
	}
	return nil
}

// makeRoom moves the current message's bytes to the front of the buffer,
// and grows it if they and n more bytes still do not fit. It grows by
// doubling (at most twice the bytes received), so that a size field alone
// never makes it allocate.
func (d *Decoder) makeRoom(n int) {
	if d.keep > 0 {
		copy(d.buf, d.buf[d.keep:d.w])
		d.pos -= d.keep
		d.w -= d.keep
		d.keep = 0
	}
	need := d.pos + n
	if need <= len(d.buf) && len(d.buf)-d.w >= ReadChunk/4 {
		return
	}
	size := len(d.buf)
	for size < need || size-d.w < ReadChunk/4 {
		size *= 2
	}
	// Never more than twice what the stream has delivered: a large
	// announced size fills in steps as its bytes come.
	if size > 2*(d.w+ReadChunk) && size > need {
		size = max(2*(d.w+ReadChunk), len(d.buf))
	}
	if size <= len(d.buf) {
		return
	}
	nb := make([]byte, size)
	copy(nb, d.buf[:d.w])
	d.buf = nb
}
