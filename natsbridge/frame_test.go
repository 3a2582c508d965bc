package natsbridge

import (
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/dutyrt/duty"
	"github.com/dutyrt/duty/mailbox"
	"github.com/stretchr/testify/require"
)

// msg is a decoded message, copied.
type msg struct {
	typeID int32
	parts  []string
}

func decodeAll(t testing.TB, frame []byte) (Header, []msg) {
	t.Helper()
	var r Reader
	h, err := r.Reset(frame)
	require.NoError(t, err)
	var out []msg
	for r.Next() {
		m := msg{typeID: r.TypeID()}
		for _, p := range r.Parts() {
			m.parts = append(m.parts, string(p))
		}
		out = append(out, m)
	}
	return h, out
}

func TestFrameRawBytes(t *testing.T) {
	b, err := newBatch(128)
	require.NoError(t, err)
	require.NoError(t, b.Append(7, []byte("ab")))
	require.NoError(t, b.Append(0x10203, []byte("x"), nil))
	f := b.Seal(0x0102030405060708, 9, 0x1011)
	want := []byte{
		'D', 'N', 'B', 2, // magic, version
		2, 0, 0, 0, // count
		8, 7, 6, 5, 4, 3, 2, 1, // source
		9, 0, 0, 0, 0, 0, 0, 0, // batch sequence
		0x11, 0x10, 0, 0, 0, 0, 0, 0, // first message sequence
		31, 0, 0, 0, // body length
		0, 0, 0, 0, // crc, filled below
		7, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 'a', 'b', // type 7, one part "ab"
		3, 2, 1, 0, 2, 0, 0, 0, 1, 0, 0, 0, 'x', 0, 0, 0, 0, // two parts "x", ""
	}
	tab := crc32.MakeTable(crc32.Castagnoli)
	binary.LittleEndian.PutUint32(want[36:], crc32.Update(crc32.Checksum(want[:36], tab), tab, want[40:]))
	require.Equal(t, want, f)
	h, got := decodeAll(t, f)
	require.Equal(t, Header{Count: 2, Source: 0x0102030405060708, Sequence: 9, First: 0x1011}, h)
	require.Equal(t, []msg{{7, []string{"ab"}}, {0x10203, []string{"x", ""}}}, got)
}

func TestBatchFullAndTooLarge(t *testing.T) {
	b, err := newBatch(minBatchBytes + 4)
	require.NoError(t, err)
	require.NoError(t, b.Append(1, []byte("1234")))
	require.Equal(t, errBatchFull, b.Append(1, nil), "unwrapped")
	require.Equal(t, 1, b.Count())
	b.Reset()
	require.ErrorIs(t, b.Append(1, []byte("12345")), ErrTooLarge)
	require.ErrorIs(t, b.Append(0, []byte("1")), mailbox.ErrTypeID)
	require.ErrorIs(t, b.Append(mailbox.MaxTypeID+1, []byte("1")), mailbox.ErrTypeID)
	require.ErrorIs(t, b.Append(1), mailbox.ErrArgument)
	require.Equal(t, 0, b.Count())
	_, err = newBatch(minBatchBytes - 1)
	require.ErrorIs(t, err, ErrConfig)
}

func TestReaderRejects(t *testing.T) {
	b, err := newBatch(256)
	require.NoError(t, err)
	require.NoError(t, b.Append(5, []byte("hello"), []byte("world")))
	good := append([]byte(nil), b.Seal(1, 1, 1)...)
	reseal := func(f []byte) []byte { // fixes the checksum after an edit
		binary.LittleEndian.PutUint32(f[offCRC:], checksum(f))
		return f
	}
	edit := func(fn func(f []byte) []byte) []byte { return fn(append([]byte(nil), good...)) }
	cases := []struct {
		name  string
		frame []byte
		want  error
	}{
		{"empty", nil, ErrForeign},
		{"json", []byte(`{"hello":"world","and":"some more bytes"}`), ErrForeign},
		{"magic only", good[:offVersion], ErrForeign},
		{"short", good[:headerLength-1], ErrMalformed},
		{"version 1", edit(func(f []byte) []byte { f[offVersion] = 1; return f }), ErrVersion},
		{"version 3", edit(func(f []byte) []byte { f[offVersion] = 3; return f }), ErrVersion},
		{"truncated", good[:len(good)-1], ErrMalformed},
		{"trailing", reseal(binary.LittleEndian.AppendUint32(edit(func(f []byte) []byte {
			binary.LittleEndian.PutUint32(f[offBodyLen:], uint32(len(f)+4-headerLength))
			return f
		}), 0)), ErrMalformed},
		{"checksum", edit(func(f []byte) []byte { f[len(f)-1] ^= 1; return f }), ErrMalformed},
		{"count 0", edit(func(f []byte) []byte { binary.LittleEndian.PutUint32(f[offCount:], 0); return f }), ErrMalformed},
		{"count 2", edit(func(f []byte) []byte { binary.LittleEndian.PutUint32(f[offCount:], 2); return f }), ErrMalformed},
		{"source 0", edit(func(f []byte) []byte { binary.LittleEndian.PutUint64(f[offSource:], 0); return f }), ErrMalformed},
		{"sequence 0", edit(func(f []byte) []byte { binary.LittleEndian.PutUint64(f[offSequence:], 0); return reseal(f) }), ErrMalformed},
		{"first 0", edit(func(f []byte) []byte { binary.LittleEndian.PutUint64(f[offFirst:], 0); return reseal(f) }), ErrMalformed},
		{"first below sequence", edit(func(f []byte) []byte {
			binary.LittleEndian.PutUint64(f[offSequence:], 5)
			binary.LittleEndian.PutUint64(f[offFirst:], 4)
			return reseal(f)
		}), ErrMalformed},
		{"first too high", edit(func(f []byte) []byte { binary.LittleEndian.PutUint64(f[offFirst:], maxSequence+1); return reseal(f) }), ErrMalformed},
		{"header damaged", edit(func(f []byte) []byte { f[offFirst] ^= 4; return f }), ErrMalformed},
		{"type 0", edit(func(f []byte) []byte { binary.LittleEndian.PutUint32(f[headerLength:], 0); return reseal(f) }), ErrMalformed},
		{"parts 0", edit(func(f []byte) []byte { binary.LittleEndian.PutUint32(f[headerLength+4:], 0); return reseal(f) }), ErrMalformed},
		{"parts 3", edit(func(f []byte) []byte { binary.LittleEndian.PutUint32(f[headerLength+4:], 3); return reseal(f) }), ErrMalformed},
		{"part too long", edit(func(f []byte) []byte { binary.LittleEndian.PutUint32(f[headerLength+8:], 1<<31); return reseal(f) }), ErrMalformed},
	}
	var r Reader
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := r.Reset(c.frame)
			require.ErrorIs(t, err, c.want)
			require.False(t, r.Next(), "a rejected frame yields nothing")
		})
	}
	_, err = r.Reset(good)
	require.NoError(t, err)
	_, err = r.Reset(good[:40])
	require.ErrorIs(t, err, ErrMalformed)
	require.False(t, r.Next(), "nothing left of the good frame read before")
	require.ErrorIs(t, ErrMalformed, duty.ErrCorrupt)
	require.NotErrorIs(t, ErrForeign, duty.ErrCorrupt, "a foreign payload is not corruption")
	require.NotErrorIs(t, ErrVersion, duty.ErrCorrupt, "another version is not corruption")
}

func TestEncodeDecodeAllocFree(t *testing.T) {
	b, err := newBatch(1 << 12)
	require.NoError(t, err)
	hdr, body := []byte("header"), []byte("the body of the message")
	var r Reader
	var seq uint64
	allocs := testing.AllocsPerRun(100, func() {
		b.Reset()
		for b.Append(3, hdr, body) == nil {
		}
		seq++
		f := b.Seal(42, seq, seq*1000)
		if _, err := r.Reset(f); err != nil {
			panic(err)
		}
		for r.Next() {
		}
	})
	require.Zero(t, allocs)
}
