package zmtpwire

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

// chunkReader hands out its chunks one Read at a time.
type chunkReader struct{ chunks [][]byte }

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.chunks) == 0 {
		return 0, nil
	}
	n := copy(p, r.chunks[0])
	if r.chunks[0] = r.chunks[0][n:]; len(r.chunks[0]) == 0 {
		r.chunks = r.chunks[1:]
	}
	return n, nil
}

// NextBuffered decodes what one read brought, stops before a message cut
// by the end of the read (without reading), and leaves its bytes for Next,
// which then returns it whole: a short frame, a multipart message with a
// long frame, a command.
func TestNextBufferedStopsAtTheReadAndNextResumes(t *testing.T) {
	msgs := [][][]byte{{[]byte("a")}, {[]byte("b"), pattern(5, 300)}, {pattern(6, 40)}, {[]byte("c")}}
	stream := encode(0, msgs...)
	for cut := 1; cut < len(stream); cut++ {
		d := NewDecoder(&chunkReader{chunks: [][]byte{bytes.Clone(stream[:cut]), bytes.Clone(stream[cut:])}}, 0, 0)
		var got [][][]byte
		k, err := d.Next()
		require.NoError(t, err)
		require.Equal(t, KindMessage, k)
		got = append(got, clone(d.Parts()))
		for {
			k, ok, err := d.NextBuffered()
			require.NoError(t, err)
			if !ok {
				break
			}
			require.Equal(t, KindMessage, k)
			got = append(got, clone(d.Parts()))
		}
		for len(got) < len(msgs) {
			k, err := d.Next()
			require.NoError(t, err, "cut %d", cut)
			require.Equal(t, KindMessage, k)
			got = append(got, clone(d.Parts()))
		}
		require.Equal(t, msgs, got, "cut %d", cut)
		_, ok, err := d.NextBuffered()
		require.NoError(t, err)
		require.False(t, ok)
	}

	e := NewEncoder(0)
	e.Message([]byte("w"))
	e.Command("PING", []byte{0, 1})
	e.Message([]byte("x"), []byte{})
	var w bytes.Buffer
	_, _ = e.WriteTo(&w)
	d := NewDecoder(bytes.NewReader(w.Bytes()), 0, 0)
	_, err := d.Next()
	require.NoError(t, err)
	k, ok, err := d.NextBuffered()
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, KindCommand, k)
	require.Equal(t, "\x04PING\x00\x01", string(d.Command()))
	k, ok, err = d.NextBuffered()
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, KindMessage, k)
	require.Equal(t, [][]byte{[]byte("x"), {}}, d.Parts())
}

// NextBuffered reports a protocol violation in the buffer as Next does.
func TestNextBufferedReportsErrors(t *testing.T) {
	stream := append(encode(0, [][]byte{[]byte("a")}), 0xf8, 0)
	d := NewDecoder(bytes.NewReader(stream), 0, 0)
	_, err := d.Next()
	require.NoError(t, err)
	_, ok, err := d.NextBuffered()
	require.ErrorIs(t, err, ErrProtocol)
	require.False(t, ok)
}

func clone(parts [][]byte) [][]byte {
	out := make([][]byte, len(parts))
	for i, p := range parts {
		out[i] = bytes.Clone(p)
	}
	return out
}
