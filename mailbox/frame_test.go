package mailbox

import (
	"encoding/binary"
	"testing"

	"github.com/dutyrt/duty/internal/mailboxdef"
	"github.com/dutyrt/duty/internal/mailboxframe"
	"github.com/dutyrt/duty/ringbuf"
	"github.com/stretchr/testify/require"
)

// The framing constants, as docs/mailbox.md states them.
func TestFrameConstants(t *testing.T) {
	require.Equal(t, int32(0x00ffffff), MaxTypeID)
	require.Equal(t, int32(0x40000000), framedFlag)
	require.Equal(t, 32, frameHeaderLength)
	require.Equal(t, 0, mailboxdef.KeyOffset)
	require.Equal(t, 8, mailboxdef.SequenceOffset)
	require.Equal(t, 16, mailboxdef.IndexOffset)
	require.Equal(t, 20, mailboxdef.CountOffset)
	require.Equal(t, 24, mailboxdef.BodyLengthOffset)
	require.Equal(t, 28, mailboxdef.PartsOffset)
	require.Equal(t, 4, partLengthPrefix)
}

// Sender keys are never 0, which SenderKey reports for a plain message:
// not the first Sender's of a fresh ring, nor the Mailbox's own per-message
// keys.
func TestSenderKeysAreNeverZero(t *testing.T) {
	mb := newMailbox(t, Config{})
	require.Zero(t, RingOf(mb).NextCorrelationID(), "a fresh ring's counter starts at 0")
	mb = newMailbox(t, Config{})
	s := mb.NewSender()
	require.NotZero(t, s.key)
	require.NoError(t, s.SendParts(1, []byte("a"), []byte("a")))
	require.NoError(t, mb.SendParts(2, []byte("b"), []byte("b")))
	require.NoError(t, mb.Send(3, []byte("plain")))
	var keys []int64
	_, err := mb.Drain(func(m *Message) Action {
		keys = append(keys, m.key)
		return Continue
	}, 10)
	require.NoError(t, err)
	require.Len(t, keys, 3)
	require.Equal(t, s.key, keys[0])
	require.NotZero(t, keys[1])
	require.NotEqual(t, keys[0], keys[1])
	require.Zero(t, keys[2], "a plain message")
}

// The raw bytes a multipart message puts in the ring: one record of type
// framedFlag|type, the frame header, then length-prefixed parts.
func TestFrameRawBytes(t *testing.T) {
	mb := newMailbox(t, Config{Capacity: minCapacity})
	s := mb.NewSender()
	require.NoError(t, s.SendParts(9, []byte("ab"), []byte(""), []byte("cde")))
	buf := RingOf(mb).Buffer()
	body := 3*partLengthPrefix + 5
	require.Equal(t, int32(ringbuf.HeaderLength+frameHeaderLength+body), int32(binary.LittleEndian.Uint32(buf[0:])))
	require.Equal(t, framedFlag|9, int32(binary.LittleEndian.Uint32(buf[4:])))
	p := buf[ringbuf.HeaderLength:]
	require.Equal(t, s.key, int64(binary.LittleEndian.Uint64(p[mailboxdef.KeyOffset:])))
	require.Equal(t, uint64(0), binary.LittleEndian.Uint64(p[mailboxdef.SequenceOffset:]))
	require.Equal(t, uint32(0), binary.LittleEndian.Uint32(p[mailboxdef.IndexOffset:]))
	require.Equal(t, uint32(1), binary.LittleEndian.Uint32(p[mailboxdef.CountOffset:]))
	require.Equal(t, uint32(body), binary.LittleEndian.Uint32(p[mailboxdef.BodyLengthOffset:]))
	require.Equal(t, uint32(3), binary.LittleEndian.Uint32(p[mailboxdef.PartsOffset:]))
	b := p[frameHeaderLength:]
	require.Equal(t, []byte{2, 0, 0, 0, 'a', 'b', 0, 0, 0, 0, 3, 0, 0, 0, 'c', 'd', 'e'}, b[:body])

	// A plain message is an Agrona record: user type, raw payload.
	mb2 := newMailbox(t, Config{Capacity: minCapacity})
	require.NoError(t, mb2.Send(5, []byte("xyz")))
	buf = RingOf(mb2).Buffer()
	require.Equal(t, int32(11), int32(binary.LittleEndian.Uint32(buf[0:])))
	require.Equal(t, int32(5), int32(binary.LittleEndian.Uint32(buf[4:])))
	require.Equal(t, "xyz", string(buf[8:11]))
}

// A fragmented message: records of maxFrag body bytes and a shorter last
// one, all of one batch, with consecutive indexes.
func TestFrameFragmentsRaw(t *testing.T) {
	mb := newMailbox(t, Config{Capacity: 4096}) // records of 512 bytes, 480 of body
	require.Equal(t, 512, mb.MaxClaimLength())
	payload := pattern(1, 1000)
	s := mb.NewSender()
	require.NoError(t, s.Send(3, payload))
	buf := RingOf(mb).Buffer()
	at := 0
	var body []byte
	for i := range 3 {
		length := int(binary.LittleEndian.Uint32(buf[at:]))
		require.Equal(t, framedFlag|3, int32(binary.LittleEndian.Uint32(buf[at+4:])))
		var h mailboxframe.Header
		mailboxframe.ReadHeader(buf[at+8:], &h)
		require.Equal(t, mailboxframe.Header{Key: s.key, Seq: 0, Index: uint32(i), Count: 3, BodyLen: 1000, Parts: 1}, h)
		body = append(body, buf[at+8+frameHeaderLength:at+length]...)
		at += ringbuf.RecordSize(length - 8)
	}
	require.Equal(t, payload, body)
}
