package journal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty"
	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/mailbox"
)

// A multipart message goes through a Recorder into one RecordParts
// record and comes out of a Replayer as the same parts; a one-part message
// stays a plain record.
func TestRecordAndReplayMultipart(t *testing.T) {
	j := openT(t, testDir(t), Options{})
	in := newMailbox(t)
	rec, err := NewRecorder("recorder", j, 7, in, nil, 0)
	require.NoError(t, err)
	messages := [][][]byte{
		{[]byte("header"), []byte("the body"), {}, []byte("trailer")},
		{[]byte("single")},
		{{}, make([]byte, 300)},
	}
	for _, m := range messages {
		require.NoError(t, in.SendParts(9, m...))
	}
	_, err = rec.DoWork()
	require.NoError(t, err)

	tl, err := j.NewTailer()
	require.NoError(t, err)
	defer tl.Close()
	var parts [][]byte
	for i, want := range messages {
		r, ok, err := tl.Next()
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, len(want) > 1, r.Flags&recordParts != 0, "message %d", i)
		parts, err = r.Parts(parts)
		require.NoError(t, err)
		require.Equal(t, len(want), len(parts), "message %d", i)
		for k := range want {
			require.True(t, bytes.Equal(want[k], parts[k]), "message %d part %d", i, k)
		}
	}

	require.NoError(t, tl.SeekStart())
	out := newMailbox(t)
	rp, err := NewReplayer("replayer", tl, out, 0)
	require.NoError(t, err)
	rp.StopAtEnd = true
	_, err = rp.DoWork()
	require.ErrorIs(t, err, agent.ErrDone)
	i := 0
	_, err = out.Drain(func(m *mailbox.Message) mailbox.Action {
		require.Equal(t, int32(9), m.TypeID())
		require.Equal(t, len(messages[i]), m.NumParts(), "message %d", i)
		for k, p := range messages[i] {
			require.True(t, bytes.Equal(p, m.Part(k)), "message %d part %d", i, k)
		}
		i++
		return mailbox.Continue
	}, 100)
	require.NoError(t, err)
	require.Equal(t, len(messages), i)
}

// plainSink takes single messages only.
type plainSink struct{ got int }

func (s *plainSink) Send(int32, []byte) error { s.got++; return nil }

// A multipart record for a sink without SendParts is an error naming the
// record, which stays pending: nothing is sent as a concatenation.
func TestReplayerRefusesMultipartForPlainSink(t *testing.T) {
	j := openT(t, testDir(t), Options{})
	_, _, err := j.Append(1, 3, []byte("plain"))
	require.NoError(t, err)
	pos, _, err := j.AppendParts(1, 3, []byte("a"), []byte("b"))
	require.NoError(t, err)
	tl, err := j.NewTailer()
	require.NoError(t, err)
	defer tl.Close()
	sink := &plainSink{}
	rp, err := NewSinkReplayer("plain", tl, sink, func(error) bool { return false }, 0)
	require.NoError(t, err)
	for range 2 {
		_, err = rp.DoWork()
		require.ErrorIs(t, err, ErrArgument)
		require.ErrorContains(t, err, "multipart")
		require.Equal(t, 1, sink.got)
		require.Equal(t, pos, tl.Position(), "the multipart record is still pending")
	}
}

// Part tables that do not describe their body are corruption, never a
// panic or a part out of the body.
func TestPartsRejectsBadTables(t *testing.T) {
	table := func(n uint32, lens ...uint32) []byte {
		b := binary.LittleEndian.AppendUint32(nil, n)
		for _, l := range lens {
			b = binary.LittleEndian.AppendUint32(b, l)
		}
		return b
	}
	cases := map[string][]byte{
		"empty body":         {},
		"one part":           append(table(1, 3), "abc"...),
		"too many parts":     table(maxRecordParts + 1),
		"table past body":    table(3, 1),
		"part past body":     append(table(2, 1, 5), "abcd"...),
		"bytes after parts":  append(table(2, 1, 1), "abc"...),
		"length wraps":       append(table(2, 0xFFFFFFFF, 1), "ab"...),
		"count near the max": table(maxRecordParts),
	}
	for name, body := range cases {
		r := Record{RecordHeader: RecordHeader{Flags: recordParts}, Position: 4096, Body: body}
		parts, err := r.Parts(nil)
		require.ErrorIs(t, err, ErrCorrupt, name)
		require.ErrorIs(t, err, duty.ErrCorrupt, name)
		require.ErrorContains(t, err, "position 4096", name)
		require.Empty(t, parts, name)
	}
	good := Record{RecordHeader: RecordHeader{Flags: recordParts}, Body: append(table(2, 1, 2), "abc"...)}
	parts, err := good.Parts(nil)
	require.NoError(t, err)
	require.Equal(t, [][]byte{[]byte("a"), []byte("bc")}, parts)
}

// A record with a flag this version does not know is refused by readers
// (CRC intact: it is the flag, not the bytes).
func TestUnknownRecordFlagIsCorrupt(t *testing.T) {
	j := openT(t, testDir(t), Options{})
	pos, _, err := j.Append(1, 3, []byte("flagged"))
	require.NoError(t, err)
	s := j.cur
	off := pos - s.start
	rec := s.data[off : off+recordHeaderLength+7]
	binary.LittleEndian.PutUint32(rec[flagsOffset:], 1<<5)
	binary.LittleEndian.PutUint32(rec[crcOffset:], recordCRC(rec))
	tl, err := j.NewTailer()
	require.NoError(t, err)
	defer tl.Close()
	_, _, err = tl.Next()
	var ce *corruptError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, pos, ce.Position)
	require.ErrorContains(t, err, "unknown flags")
}

func TestAppendPartsArguments(t *testing.T) {
	j := openT(t, testDir(t), Options{})
	_, _, err := j.AppendParts(1, 3, make([][]byte, maxRecordParts+1)...)
	require.ErrorIs(t, err, ErrArgument)
	pos, seq, err := j.AppendParts(1, 3)
	require.NoError(t, err, "no part: an empty plain record")
	require.Equal(t, int64(0), seq)
	tl, err := j.NewTailer()
	require.NoError(t, err)
	defer tl.Close()
	r, ok, err := tl.Next()
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, pos, r.Position)
	require.Zero(t, r.Flags)
	require.Empty(t, r.Body)
}

// Appending and reading back a multipart record allocates nothing.
func TestPartsDoNotAllocate(t *testing.T) {
	j := openT(t, testDir(t), Options{})
	s, err := j.Stream(1)
	require.NoError(t, err)
	a, b := []byte("first part"), make([]byte, 100)
	tl, err := j.NewTailer()
	require.NoError(t, err)
	defer tl.Close()
	parts := make([][]byte, 0, 4)
	allocs := testing.AllocsPerRun(1000, func() {
		if _, _, err := s.AppendParts(2, a, b); err != nil {
			panic(err)
		}
		r, ok, err := tl.Next()
		if err != nil || !ok {
			panic(errors.Join(err, errors.New("no record")))
		}
		if parts, err = r.Parts(parts); err != nil || len(parts) != 2 {
			panic(err)
		}
	})
	require.Zero(t, allocs)
}
