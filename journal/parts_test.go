package journal

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty"
	"github.com/dutyrt/duty/internal/journalfile"
)

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
		r := Record{RecordHeader: RecordHeader{Flags: journalfile.RecordParts}, Position: 4096, Body: body}
		parts, err := r.Parts(nil)
		require.ErrorIs(t, err, ErrCorrupt, name)
		require.ErrorIs(t, err, duty.ErrCorrupt, name)
		require.ErrorContains(t, err, "position 4096", name)
		require.Empty(t, parts, name)
	}
	good := Record{RecordHeader: RecordHeader{Flags: journalfile.RecordParts}, Body: append(table(2, 1, 2), "abc"...)}
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
	off := pos - s.Start
	rec := s.Data[off : off+journalfile.RecordHeaderLength+7]
	binary.LittleEndian.PutUint32(rec[journalfile.FlagsOffset:], 1<<5)
	binary.LittleEndian.PutUint32(rec[journalfile.CrcOffset:], journalfile.RecordCRC(rec))
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
