package zmtpwire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty"
	"github.com/dutyrt/duty/internal/buildtags"
)

func encode(refMin int, msgs ...[][]byte) []byte {
	e := NewEncoder(refMin)
	for _, m := range msgs {
		e.Message(m...)
	}
	var b bytes.Buffer
	_, _ = e.WriteTo(&b)
	return b.Bytes()
}

// The bytes on the wire, as docs/zmtp.md "Framing" draws them: a short
// frame up to 255 bytes, a long one from 256.
func TestFrameRawBytes(t *testing.T) {
	b := encode(0, [][]byte{[]byte("ab"), bytes.Repeat([]byte{7}, 255), bytes.Repeat([]byte{8}, 256)})
	require.Equal(t, []byte{FlagMore, 2, 'a', 'b'}, b[:4])
	require.Equal(t, []byte{FlagMore, 255}, b[4:6])
	off := 6 + 255
	require.Equal(t, byte(FlagLong), b[off])
	require.Equal(t, uint64(256), binary.BigEndian.Uint64(b[off+1:]))
	require.Len(t, b, off+9+256)

	e := NewEncoder(0)
	e.Command("PING", []byte{0, 10}, []byte("ctx"))
	var w bytes.Buffer
	_, err := e.WriteTo(&w)
	require.NoError(t, err)
	require.Equal(t, append([]byte{FlagCommand, 10, 4}, "PING\x00\x0actx"...), w.Bytes())
}

func TestRoundTripSizesAndParts(t *testing.T) {
	var msgs [][][]byte
	for _, n := range []int{0, 1, 254, 255, 256, 257, 8191, 8192, 70000, 1 << 20} {
		msgs = append(msgs, [][]byte{pattern(n, n)})
		msgs = append(msgs, [][]byte{[]byte("topic"), pattern(n+1, n), nil})
	}
	for _, refMin := range []int{1, 256, DefaultRefMin} {
		d := NewDecoder(bytes.NewReader(encode(refMin, msgs...)), 2<<20, 0)
		for i, m := range msgs {
			k, err := d.Next()
			require.NoError(t, err, i)
			require.Equal(t, KindMessage, k)
			require.Len(t, d.Parts(), len(m))
			for j := range m {
				require.True(t, bytes.Equal(m[j], d.Parts()[j]), "message %d part %d", i, j)
			}
		}
		_, err := d.Next()
		require.ErrorIs(t, err, io.EOF)
	}
}

// A stream cut anywhere inside a message yields the messages before it
// whole and then io.ErrUnexpectedEOF: never a part of the cut message.
func TestTruncatedStreamDeliversNothingTorn(t *testing.T) {
	first := [][]byte{[]byte("a"), []byte("b")}
	second := [][]byte{[]byte("c"), pattern(1, 300)}
	full := encode(0, first, second)
	cut := len(encode(0, first))
	for n := cut + 1; n < len(full); n++ {
		d := NewDecoder(bytes.NewReader(full[:n]), 0, 0)
		k, err := d.Next()
		require.NoError(t, err)
		require.Equal(t, KindMessage, k)
		_, err = d.Next()
		require.ErrorIs(t, err, io.ErrUnexpectedEOF, "cut at %d", n)
	}
}

func TestDecoderRefusesOversizedBeforeReadingTheBody(t *testing.T) {
	hdr := []byte{FlagLong, 0, 0, 0, 0, 0, 0x10, 0, 1} // 1 MiB + 1
	d := NewDecoder(bytes.NewReader(hdr), 1<<20, 0)
	_, err := d.Next()
	require.ErrorIs(t, err, ErrTooLarge)
	require.LessOrEqual(t, d.BufferLen(), 2*ReadChunk)

	// The bound is on the whole message, across its frames.
	b := encode(0, [][]byte{make([]byte, 600), make([]byte, 600)})
	_, err = NewDecoder(bytes.NewReader(b), 1000, 0).Next()
	require.ErrorIs(t, err, ErrTooLarge)

	parts := make([][]byte, 5)
	_, err = NewDecoder(bytes.NewReader(encode(0, parts)), 0, 4).Next()
	require.ErrorIs(t, err, ErrTooLarge)

	huge := []byte{FlagLong, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	_, err = NewDecoder(bytes.NewReader(huge), 0, 0).Next()
	require.ErrorIs(t, err, ErrTooLarge)
}

func TestDecoderRefusesProtocolViolations(t *testing.T) {
	for name, b := range map[string][]byte{
		"reserved bit":         {0x08, 0},
		"command with more":    {FlagCommand | FlagMore, 0},
		"command in multipart": {FlagMore, 1, 'x', FlagCommand, 0},
	} {
		_, err := NewDecoder(bytes.NewReader(b), 0, 0).Next()
		require.ErrorIs(t, err, ErrProtocol, name)
		require.ErrorIs(t, err, duty.ErrCorrupt, name)
	}
}

// The decoder grows with what arrives, not with what is announced: a peer
// announcing a large frame and sending a little of it costs a little.
func TestDecoderGrowsWithTheBytesReceived(t *testing.T) {
	hdr := []byte{FlagLong, 0, 0, 0, 0, 0x04, 0, 0, 0} // 64 MiB announced
	stream := append(hdr, make([]byte, 100<<10)...)
	d := NewDecoder(bytes.NewReader(stream), 128<<20, 0)
	_, err := d.Next()
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	require.Less(t, d.BufferLen(), 1<<20)
}

// oneByteReader hands out one byte per Read: every state boundary of the
// decoder falls between two reads.
type oneByteReader struct{ b []byte }

func (r *oneByteReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	p[0] = r.b[0]
	r.b = r.b[1:]
	return 1, nil
}

func TestDecoderAcrossReadBoundaries(t *testing.T) {
	msgs := [][][]byte{{[]byte("x"), pattern(3, 256)}, {pattern(4, 40000)}}
	e := NewEncoder(0)
	e.Command("PING", []byte{0, 0})
	for _, m := range msgs {
		e.Message(m...)
	}
	var b bytes.Buffer
	_, _ = e.WriteTo(&b)
	d := NewDecoder(&oneByteReader{b.Bytes()}, 0, 0)
	k, err := d.Next()
	require.NoError(t, err)
	require.Equal(t, KindCommand, k)
	require.Equal(t, "\x04PING\x00\x00", string(d.Command()))
	for _, m := range msgs {
		k, err := d.Next()
		require.NoError(t, err)
		require.Equal(t, KindMessage, k)
		require.Equal(t, m, d.Parts())
	}
}

func TestEncoderAllocatesNothing(t *testing.T) {
	skipUnderRace(t)
	e := NewEncoder(0)
	small, large := make([]byte, 32), make([]byte, 64<<10)
	var w io.Writer = io.Discard
	run := func() {
		e.Message(small, small)
		e.Message(large)
		e.Command("PONG")
		_, _ = e.WriteTo(w)
	}
	run()
	require.Zero(t, testing.AllocsPerRun(100, run))
}

func TestDecoderAllocatesNothing(t *testing.T) {
	skipUnderRace(t)
	stream := encode(0, [][]byte{make([]byte, 32)}, [][]byte{[]byte("t"), make([]byte, 300)})
	r := bytes.NewReader(stream)
	d := NewDecoder(r, 0, 0)
	run := func() {
		r.Reset(stream)
		for {
			if _, err := d.Next(); err != nil {
				if !errors.Is(err, io.EOF) {
					t.Fatal(err)
				}
				d.state = stFlags
				return
			}
		}
	}
	run()
	require.Zero(t, testing.AllocsPerRun(100, run))
}

// pattern returns n bytes depending on seed and offset.
func pattern(seed, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(seed*131 + i*7 + i>>8)
	}
	return b
}

// recordingWriter keeps the slices it is handed, as a connection's writev
// would receive them.
type recordingWriter struct{ writes [][]byte }

func (w *recordingWriter) Write(p []byte) (int, error) {
	w.writes = append(w.writes, p)
	return len(p), nil
}

// A large body reaches the writer as the caller's own memory, not a copy;
// the headers and small bodies around it arrive packed in runs.
func TestEncoderHandsLargeBodiesByReference(t *testing.T) {
	large := pattern(9, DefaultRefMin)
	e := NewEncoder(0)
	e.Message([]byte("a"), []byte("b"), large, []byte("c"))
	e.Message([]byte("d"))
	var w recordingWriter
	n, err := e.WriteTo(&w)
	require.NoError(t, err)
	require.Len(t, w.writes, 3, "packed run, the body, packed run")
	require.Same(t, &large[0], &w.writes[1][0], "the body itself, not a copy")
	require.Equal(t, []byte{FlagMore, 1, 'a', FlagMore, 1, 'b', FlagMore | FlagLong, 0, 0, 0, 0, 0, 0, 0x20, 0}, w.writes[0])
	require.Equal(t, []byte{0, 1, 'c', 0, 1, 'd'}, w.writes[2])
	require.Equal(t, int64(len(w.writes[0])+len(large)+len(w.writes[2])), n)
	require.Zero(t, e.Len())
}

// The decoder's parts are its buffer, not copies of it.
func TestDecoderPartsAliasItsBuffer(t *testing.T) {
	d := NewDecoder(bytes.NewReader(encode(0, [][]byte{[]byte("head"), pattern(2, 300)})), 0, 0)
	_, err := d.Next()
	require.NoError(t, err)
	for _, p := range d.Parts() {
		inside := false
		for i := range d.buf[:d.w] {
			if &d.buf[i] == &p[0] {
				inside = true
				break
			}
		}
		require.True(t, inside, "a part of %d bytes outside the buffer", len(p))
	}
}

// skipUnderRace skips an allocation test: the race detector allocates.
func skipUnderRace(t *testing.T) {
	if buildtags.Race {
		t.Skip("the race detector allocates")
	}
}
