package mailbox

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/dutyrt/duty/internal/mailboxdef"
	"github.com/dutyrt/duty/internal/mailboxframe"
	"github.com/dutyrt/duty/internal/record"
	"github.com/dutyrt/duty/ringbuf"
	"github.com/stretchr/testify/require"
)

// encodeFramed returns the records a sender writes for a framed message,
// with the mailbox's own encoder, so that a fuzzer can corrupt them.
func encodeFramed(mb *Mailbox, typeID int32, key int64, seq uint64, parts [][]byte) []rec {
	body := mailboxframe.BodyLength(parts)
	count, _ := mb.lay.Records(body)
	h := mailboxframe.Header{Key: key, Seq: seq, Count: uint32(count), BodyLen: uint32(body), Parts: uint32(len(parts))}
	w := mailboxframe.NewBodyWriter(parts)
	out := make([]rec, count)
	rest := body
	for i := range out {
		frag := min(rest, mb.lay.MaxFrag)
		p := make([]byte, frameHeaderLength+frag)
		h.Index = uint32(i)
		mailboxframe.PutHeader(p, &h)
		w.Fill(p[frameHeaderLength:])
		out[i] = rec{framedFlag | typeID, p}
		rest -= frag
	}
	return out
}

// ringRec is a record as found in the ring by a raw scan.
type ringRec struct {
	offset  int
	typ     int32
	payload []byte
}

// scanRing lists the committed records between head and tail, padding
// included, with their offsets.
func scanRing(mb *Mailbox) []ringRec {
	var out []ringRec
	buf := RingOf(mb).Buffer()
	pos, tail := RingOf(mb).ConsumerPosition(), RingOf(mb).ProducerPosition()
	for pos < tail {
		off := int(pos & int64(mb.capacity-1))
		length := int(int32(binary.LittleEndian.Uint32(buf[off:])))
		typ := int32(binary.LittleEndian.Uint32(buf[off+4:]))
		out = append(out, ringRec{off, typ, bytes.Clone(buf[off+8 : off+length])})
		pos += int64(ringbuf.RecordSize(length - 8))
	}
	return out
}

// modelDelivery is what the reference decoder expects to be delivered.
type modelDelivery struct {
	typeID int32
	parts  []string
}

// modelParts splits a body as the framing says, independently of
// Message.setFramed.
func modelParts(body []byte, n uint32) ([]string, bool) {
	if n == 1 {
		return []string{string(body)}, true
	}
	var parts []string
	for range n {
		if len(body) < 4 {
			return nil, false
		}
		l := int(binary.LittleEndian.Uint32(body))
		body = body[4:]
		if l > len(body) {
			return nil, false
		}
		parts = append(parts, string(body[:l]))
		body = body[l:]
	}
	return parts, len(body) == 0
}

// modelDecode is a reference decoder of the framing over a list of records
// (simpler than the mailbox's: it has the whole list at hand). It returns
// the messages to deliver and the number of records to drop as corrupt.
func modelDecode(mb *Mailbox, recs []ringRec) (out []modelDelivery, corrupt int) {
	for i := 0; i < len(recs); {
		r := recs[i]
		switch {
		case r.typ == record.PaddingTypeID:
			i++
			continue
		case r.typ <= MaxTypeID:
			out = append(out, modelDelivery{r.typ, []string{string(r.payload)}})
			i++
			continue
		case r.typ&^MaxTypeID != framedFlag || r.typ&MaxTypeID == 0 || len(r.payload) < frameHeaderLength:
			corrupt++
			i++
			continue
		}
		var h mailboxframe.Header
		mailboxframe.ReadHeader(r.payload, &h)
		if h.Index != 0 || h.Count == 0 || int(h.Count) > mb.lay.MaxRecords || h.Parts == 0 ||
			int(h.Parts) > mb.maxParts || int(h.BodyLen) > mb.lay.MaxMessage {
			corrupt++
			i++
			continue
		}
		body := append([]byte(nil), r.payload[frameHeaderLength:]...)
		ok := true
		next := r.offset + ringbuf.RecordSize(len(r.payload))
		for j := 1; ok && j < int(h.Count); j++ {
			if i+j >= len(recs) || recs[i+j].offset != next || next > mb.capacity-ringbuf.HeaderLength-frameHeaderLength {
				ok = false
				break
			}
			c := recs[i+j]
			var g mailboxframe.Header
			if c.typ != r.typ || len(c.payload) < frameHeaderLength {
				ok = false
				break
			}
			mailboxframe.ReadHeader(c.payload, &g)
			if g.Index != uint32(j) || g.Key != h.Key || g.Seq != h.Seq || g.Count != h.Count ||
				g.BodyLen != h.BodyLen || g.Parts != h.Parts {
				ok = false
				break
			}
			body = append(body, c.payload[frameHeaderLength:]...)
			next += ringbuf.RecordSize(len(c.payload))
		}
		if ok && len(body) == int(h.BodyLen) {
			if parts, ok := modelParts(body, h.Parts); ok {
				out = append(out, modelDelivery{r.typ & MaxTypeID, parts})
				i += int(h.Count)
				continue
			}
		}
		corrupt++
		i++
	}
	return out, corrupt
}

// fuzzReader turns fuzz bytes into choices.
type fuzzReader struct{ b []byte }

func (r *fuzzReader) byte() byte {
	if len(r.b) == 0 {
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}

func (r *fuzzReader) u16() int { return int(r.byte()) | int(r.byte())<<8 }
func (r *fuzzReader) u32() uint32 {
	return uint32(r.u16()) | uint32(r.u16())<<16
}

// FuzzDecodeFrames writes messages built from the input (valid ones from
// the mailbox's encoder, corrupted ones, raw and invalid records) into a
// ring, drains it, and compares what is delivered and dropped with the
// reference decoder: never a panic, never a hang, never a partial
// message, every corrupt record counted and reported.
func FuzzDecodeFrames(f *testing.F) {
	f.Add([]byte{0, 5, 3})
	f.Add([]byte{1, 3, 10, 0, 20, 0, 200, 1})
	f.Add([]byte{2, 0xd0, 0x07})
	f.Add([]byte{2, 0xd0, 0x07, 3, 1, 0, 1})
	f.Add([]byte{2, 0xd0, 0x07, 3, 1, 2, 9})
	f.Add([]byte{1, 2, 0, 3, 0, 1, 3, 0, 7, 1})
	f.Add([]byte{4, 1, 0, 0, 0, 1, 0, 0, 0, 3, 0, 0, 0, 1, 0, 0, 0, 3})
	f.Add([]byte{5, 9, 9})
	f.Fuzz(func(t *testing.T, data []byte) {
		mb := newMailbox(t, Config{Capacity: 4096, MaxParts: 8})
		in := &fuzzReader{data}
		// Start at a fuzz-chosen offset, so that messages meet the end
		// of the ring.
		if filler := in.u16() % 3000; filler > 0 {
			require.NoError(t, RingOf(mb).Write(1, make([]byte, min(filler, mb.lay.MaxRecord))))
			_, err := mb.Drain(func(*Message) Action { return Continue }, 10)
			require.NoError(t, err)
		}
		var last []rec
		var msgs [][]rec
		flush := func() {
			if last != nil {
				msgs = append(msgs, last)
			}
			last = nil
		}
		for range 16 {
			if len(in.b) == 0 {
				break
			}
			switch op := in.byte() % 7; op {
			case 0: // plain record
				flush()
				last = []rec{{1 + int32(in.byte()), bytes.Repeat([]byte{in.byte()}, int(in.byte())*2)}}
			case 1: // multipart message
				flush()
				n := 1 + int(in.byte()%5)
				parts := make([][]byte, n)
				for i := range parts {
					parts[i] = bytes.Repeat([]byte{byte(i + 1)}, in.u16()%900)
				}
				if mailboxframe.BodyLength(parts) <= mb.lay.MaxMessage {
					last = encodeFramed(mb, 1+int32(in.byte()), 7, 1, parts)
				}
			case 2: // fragmented message
				flush()
				n := in.u16() % (mb.lay.MaxMessage + 1)
				last = encodeFramed(mb, 3, 8, 2, [][]byte{bytes.Repeat([]byte{9}, n)})
			case 3: // corrupt a field of the last message's records
				if len(last) == 0 {
					continue
				}
				r := &last[int(in.byte())%len(last)]
				field := in.byte() % 9
				v := in.u32()
				switch {
				case field == 0:
					r.typ = int32(v&0x7fffffff) | 1
				case field < 7 && len(r.payload) >= frameHeaderLength:
					off := []int{mailboxdef.KeyOffset, mailboxdef.SequenceOffset, mailboxdef.IndexOffset, mailboxdef.CountOffset,
						mailboxdef.BodyLengthOffset, mailboxdef.PartsOffset}[field-1]
					binary.LittleEndian.PutUint32(r.payload[off:], v%8)
				case field == 7 && len(r.payload) > 0:
					r.payload[int(v)%len(r.payload)] ^= byte(v >> 8)
				case field == 8 && len(r.payload) > 0:
					r.payload = r.payload[:int(v)%len(r.payload)]
				}
			case 4: // raw framed record with a header from the input
				flush()
				h := mailboxframe.Header{Key: int64(in.byte()), Seq: uint64(in.byte()), Index: in.u32() % 4,
					Count: in.u32() % 6, BodyLen: in.u32() % 2000, Parts: in.u32() % 10}
				last = []rec{{framedFlag | 5, framed(h, bytes.Repeat([]byte{4}, int(in.byte())))}}
			case 5: // a record with reserved type bits
				flush()
				last = []rec{{int32(in.u32()&0x7f000000) | int32(in.byte()) | 1, []byte{in.byte()}}}
			case 6: // split the last message into one batch per record
				if len(last) > 1 {
					for _, r := range last {
						msgs = append(msgs, []rec{r})
					}
					last = nil
				}
			}
		}
		flush()
		for _, m := range msgs {
			size := 0
			for _, r := range m {
				size += ringbuf.RecordSize(len(r.payload))
			}
			b, err := RingOf(mb).TryClaimBatch(size)
			if err != nil {
				continue // full, or a batch that can never fit
			}
			for _, r := range m {
				p, err := b.Append(r.typ, len(r.payload))
				require.NoError(t, err)
				copy(p, r.payload)
			}
			require.NoError(t, RingOf(mb).CommitBatch(b))
		}
		want, wantCorrupt := modelDecode(mb, scanRing(mb))
		delivered0 := mb.Stats().Delivered

		var gotMsgs []modelDelivery
		for i := 0; RingOf(mb).ConsumerPosition() != RingOf(mb).ProducerPosition(); i++ {
			require.Less(t, i, 1000, "drain does not progress")
			before := mb.Stats().Corrupt
			_, err := mb.Drain(func(m *Message) Action {
				d := modelDelivery{typeID: m.TypeID()}
				for _, p := range m.Parts() {
					d.parts = append(d.parts, string(p))
				}
				gotMsgs = append(gotMsgs, d)
				return Continue
			}, 3)
			if mb.Stats().Corrupt > before {
				require.ErrorIs(t, err, ErrCorruptFrame)
			} else {
				require.NoError(t, err)
			}
		}
		require.Equal(t, len(want), len(gotMsgs), "delivered messages")
		for i := range want {
			require.Equal(t, want[i], gotMsgs[i], fmt.Sprint("message ", i))
		}
		require.Equal(t, int64(wantCorrupt), mb.Stats().Corrupt)
		require.Equal(t, int64(len(want)), mb.Stats().Delivered-delivered0)
	})
}

// FuzzSendRoundTrip sends parts cut from the input, as one message, and
// checks that they come back whole and unchanged.
func FuzzSendRoundTrip(f *testing.F) {
	f.Add([]byte("hello"), uint16(0), uint8(1))
	f.Add(bytes.Repeat([]byte{1, 2, 3}, 400), uint16(300), uint8(4))
	f.Add(bytes.Repeat([]byte{7}, 1800), uint16(479), uint8(2))
	// The boundaries: an empty message, eight empty parts, the largest
	// message sent as one record and the smallest fragmented one, the
	// largest message and one byte more (ErrTooLong).
	limits := newMailbox(f, Config{Capacity: 4096})
	f.Add([]byte{}, uint16(0), uint8(0))
	f.Add([]byte{}, uint16(0), uint8(7))
	f.Add(bytes.Repeat([]byte{9}, limits.MaxClaimLength()), uint16(0), uint8(0))
	f.Add(bytes.Repeat([]byte{9}, limits.MaxClaimLength()+1), uint16(0), uint8(0))
	f.Add(bytes.Repeat([]byte{5}, limits.MaxMessageSize()), uint16(0), uint8(0))
	f.Add(bytes.Repeat([]byte{5}, limits.MaxMessageSize()+1), uint16(0), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, cut uint16, n uint8) {
		mb := newMailbox(t, Config{Capacity: 4096})
		nparts := 1 + int(n%8)
		parts := make([][]byte, nparts)
		rest := data
		for i := range parts {
			c := min(len(rest), int(cut)+i)
			if i == nparts-1 {
				c = len(rest)
			}
			parts[i], rest = rest[:c], rest[c:]
		}
		err := mb.SendParts(2, parts...)
		if mailboxframe.BodyLength(parts) > mb.MaxMessageSize() {
			require.Equal(t, ErrTooLong, err)
			return
		}
		require.NoError(t, err)
		calls := 0
		_, err = mb.Drain(func(m *Message) Action {
			calls++
			require.Equal(t, int32(2), m.TypeID())
			require.Equal(t, nparts, m.NumParts())
			for i := range parts {
				require.True(t, bytes.Equal(parts[i], m.Part(i)), "part %d", i)
			}
			return Continue
		}, 10)
		require.NoError(t, err)
		require.Equal(t, 1, calls)
	})
}

// FuzzChecksummedDrain: a checksummed mailbox holds a few messages of
// fuzz-chosen shapes (plain, multipart, fragmented), then fuzz-chosen
// bytes of the ring are changed, as a late writer would (or any faulty
// process sharing the ring). Draining never panics or hangs, and every
// message it delivers is one that was sent, byte for byte, in order: a
// damaged one is dropped (and counted), never delivered.
func FuzzChecksummedDrain(f *testing.F) {
	f.Add([]byte{3, 10, 200, 0}, []byte{16, 0xff})
	f.Add([]byte{1, 2, 40, 2, 5, 7}, []byte{8, 1, 9, 1})
	f.Add([]byte{2, 0xd0, 0x07, 1}, []byte{100, 0x80, 0, 4})
	f.Add([]byte{5, 1, 1, 1, 1, 1}, []byte{})
	f.Fuzz(func(t *testing.T, shapes, damage []byte) {
		mb := newMailbox(t, Config{Capacity: 4096, MaxParts: 8, Checksum: true})
		in := &fuzzReader{shapes}
		var sent [][]string
		for i := range min(int(in.byte()%6), 5) {
			nparts := 1 + int(in.byte()%3)
			parts := make([][]byte, nparts)
			want := make([]string, nparts)
			for j := range parts {
				parts[j] = pattern(i*8+j, int(in.u16())%1500)
				want[j] = string(parts[j])
			}
			if mb.SendParts(int32(1+i), parts...) != nil {
				break // full, or too long: the messages sent so far
			}
			sent = append(sent, want)
		}
		buf := RingOf(mb).Buffer()[:mb.Capacity()]
		head := int(RingOf(mb).ConsumerPosition()) & (mb.Capacity() - 1)
		queued := int(RingOf(mb).ProducerPosition()) - int(RingOf(mb).ConsumerPosition())
		for i := 0; i+1 < len(damage) && queued > 0; i += 2 {
			at := head + int(damage[i])*int(damage[i])%queued
			buf[at%len(buf)] ^= damage[i+1]
		}
		var got [][]string
		for range 20 {
			n, _ := mb.Drain(func(m *Message) Action {
				var parts []string
				for _, p := range m.Parts() {
					parts = append(parts, string(p))
				}
				got = append(got, parts)
				return Continue
			}, 100)
			if n == 0 {
				break
			}
		}
		// Every delivered message is a sent one, in order.
		next := 0
		for _, g := range got {
			for next < len(sent) && !equalParts(sent[next], g) {
				next++
			}
			require.Less(t, next, len(sent), "a delivered message nobody sent: %q", g)
			next++
		}
		if len(got) < len(sent) && queued > 0 && len(damage) >= 2 {
			require.True(t, mb.Stats().Corrupt > 0 || mb.Stats().Depth > 0,
				"a message lost without a count: %d sent, %d delivered, %+v", len(sent), len(got), mb.Stats())
		}
	})
}

func equalParts(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
