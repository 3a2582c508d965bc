package journal

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty"
	"github.com/dutyrt/duty/internal/journalfile"
)

// positions returns every record position, by sequence, of stream.
func positions(t *testing.T, j *Journal, stream uint32) []int64 {
	t.Helper()
	tl, err := j.NewTailer()
	require.NoError(t, err)
	defer tl.Close()
	var ps []int64
	for {
		r, ok, err := tl.Next()
		require.NoError(t, err)
		if !ok {
			return ps
		}
		if r.StreamID == stream {
			ps = append(ps, r.Position)
		}
	}
}

// poke modifies the byte at log position p in its segment file.
func poke(t *testing.T, dir string, p int64, f func(b []byte)) {
	t.Helper()
	start := p &^ (testSegment - 1)
	path := filepath.Join(dir, journalfile.SegmentName(start))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	f(b[p-start:])
	require.NoError(t, os.WriteFile(path, b, 0o644))
}

// written makes a closed journal of n records on stream 1 (over several
// segments) and returns their positions.
func written(t *testing.T, dir string, n int) []int64 {
	t.Helper()
	j, err := Open(dir, Options{SegmentSize: testSegment})
	require.NoError(t, err)
	appendN(t, j, 1, n)
	ps := positions(t, j, 1)
	require.NoError(t, j.Close())
	return ps
}

func TestCleanReopenNeedsNoRepair(t *testing.T) {
	dir := testDir(t)
	ps := written(t, dir, 400)
	j := openT(t, dir, Options{})
	r := j.Recovery()
	require.True(t, r.CheckpointFound)
	require.Equal(t, int64(-1), r.TornAt)
	require.Equal(t, int64(-1), r.Truncated)
	require.Empty(t, r.Skipped)
	require.Equal(t, r.End, r.Checkpoint, "a clean close checkpoints the end")
	require.Greater(t, r.End, ps[len(ps)-1])
}

func TestTornTailIsCutAndAppendingContinues(t *testing.T) {
	for _, name := range []string{"bad CRC", "garbage length", "body without length"} {
		t.Run(name, func(t *testing.T) {
			dir := testDir(t)
			ps := written(t, dir, 400)
			require.NoError(t, os.Remove(filepath.Join(dir, journalfile.CkptName)))
			last := ps[len(ps)-1]
			poke(t, dir, last, func(b []byte) {
				switch name {
				case "bad CRC":
					b[journalfile.RecordHeaderLength] ^= 0xff
				case "garbage length":
					binary.LittleEndian.PutUint32(b, 0x7fff0000)
				case "body without length":
					binary.LittleEndian.PutUint32(b, 0)
				}
			})
			j := openT(t, dir, Options{})
			r := j.Recovery()
			require.Equal(t, last, r.TornAt, r.String())
			require.Greater(t, r.TornBytes, int64(0))
			require.Equal(t, last, r.End)
			require.Equal(t, int64(399), j.nextSequence(1))
			appendN(t, j, 1, 5)
			require.Equal(t, map[uint32]int64{1: 404}, readAll(t, j))
		})
	}
}

func TestCorruptRecordInTheMiddle(t *testing.T) {
	dir := testDir(t)
	ps := written(t, dir, 400)
	require.NoError(t, os.Remove(filepath.Join(dir, journalfile.CkptName)))
	bad := ps[100]
	poke(t, dir, bad, func(b []byte) { b[journalfile.RecordHeaderLength+3] ^= 1 })

	_, err := Open(dir, Options{SegmentSize: testSegment})
	var ce *corruptError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, bad, ce.Position)
	require.ErrorIs(t, err, ErrCorrupt)
	require.ErrorIs(t, err, duty.ErrCorrupt)
	require.Contains(t, err.Error(), "CRC")

	t.Run("skip", func(t *testing.T) {
		d2 := copyDir(t, dir)
		j := openT(t, d2, Options{Recovery: RecoverSkip})
		require.Equal(t, []int64{bad}, j.Recovery().Skipped)
		tl, err := j.NewTailer()
		require.NoError(t, err)
		n := 0
		for {
			r, ok, err := tl.Next()
			require.NoError(t, err)
			if !ok {
				break
			}
			require.NotEqual(t, int64(100), r.Sequence)
			n++
		}
		require.Equal(t, 399, n)
		require.NoError(t, tl.Close())
		require.NoError(t, j.Close())
		j2 := openT(t, d2, Options{})
		require.Empty(t, j2.Recovery().Skipped, "the padding stays: a strict open goes through")
	})
	t.Run("truncate", func(t *testing.T) {
		d2 := copyDir(t, dir)
		j := openT(t, d2, Options{Recovery: RecoverTruncate})
		require.Equal(t, bad, j.Recovery().Truncated)
		require.NotEmpty(t, j.Recovery().RemovedSegments)
		require.Equal(t, map[uint32]int64{1: 100}, readAll(t, j))
		require.Equal(t, int64(100), j.nextSequence(1))
	})
	t.Run("reader", func(t *testing.T) {
		// With the checkpoint past it, Open does not look at the record
		// again: the reader that reaches it gets the error.
		d2 := copyDir(t, dir)
		j, err := Open(d2, Options{SegmentSize: testSegment, Recovery: RecoverSkip})
		require.NoError(t, err)
		require.NoError(t, j.Close())
		poke(t, d2, ps[200], func(b []byte) { b[journalfile.RecordHeaderLength] ^= 1 })
		j = openT(t, d2, Options{})
		tl, err := j.NewTailer()
		require.NoError(t, err)
		defer tl.Close()
		for {
			_, ok, err := tl.Next()
			if err != nil {
				require.ErrorAs(t, err, &ce)
				require.Equal(t, ps[200], ce.Position)
				break
			}
			require.True(t, ok, "the corrupt record was not reported")
		}
		_, _, err = tl.Next()
		require.ErrorAs(t, err, &ce, "the Tailer stays at the corrupt record")
		next, err := tl.Skip()
		require.NoError(t, err)
		require.Equal(t, ps[201], next)
		require.Equal(t, int64(1), tl.Skipped())
		r, ok, err := tl.Next()
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, int64(201), r.Sequence)
		_, err = tl.Skip()
		require.ErrorIs(t, err, ErrArgument, "nothing corrupt there")
	})
}

func copyDir(t *testing.T, dir string) string {
	t.Helper()
	d2 := testDir(t)
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range ents {
		if e.IsDir() {
			require.NoError(t, os.Rename(copyDir(t, filepath.Join(dir, e.Name())), filepath.Join(d2, e.Name())))
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(d2, e.Name()), b, 0o644))
	}
	return d2
}

// Bad input: each a clear error, never a panic.
func TestBadFilesAreClearErrors(t *testing.T) {
	dir := testDir(t)
	written(t, dir, 1000)
	segs, _ := filepath.Glob(filepath.Join(dir, "*.seg"))
	require.Greater(t, len(segs), 3)
	cases := []struct {
		name   string
		damage func(d string)
		want   error
		text   string
	}{
		{"truncated segment", func(d string) { require.NoError(t, os.Truncate(filepath.Join(d, filepath.Base(segs[1])), 4096)) }, ErrCorrupt, "file is 4096 bytes"},
		{"empty segment file", func(d string) { require.NoError(t, os.Truncate(filepath.Join(d, filepath.Base(segs[0])), 0)) }, ErrCorrupt, "header"},
		{"garbage segment", func(d string) {
			b := make([]byte, testSegment)
			for i := range b {
				b[i] = byte(i * 7)
			}
			require.NoError(t, os.WriteFile(filepath.Join(d, filepath.Base(segs[2])), b, 0o644))
		}, ErrCorrupt, "bad magic"},
		{"segment header version", func(d string) { pokeFile(t, filepath.Join(d, filepath.Base(segs[0])), journalfile.SegVersionOffset, 9) }, ErrVersion, "version 9"},
		{"segment header CRC", func(d string) { pokeFile(t, filepath.Join(d, filepath.Base(segs[1])), journalfile.SegCreatedOffset, 9) }, ErrCorrupt, "header CRC"},
		{"missing middle segment", func(d string) { require.NoError(t, os.Remove(filepath.Join(d, filepath.Base(segs[1])))) }, errMissingSegment, "missing"},
		{"record version", func(d string) {
			require.NoError(t, os.Remove(filepath.Join(d, journalfile.CkptName)))
			pokeFile(t, filepath.Join(d, filepath.Base(segs[0])), journalfile.SegmentHeaderLength+journalfile.MagicOffset, 2)
		}, ErrVersion, "record version 2"},
		{"record magic", func(d string) {
			require.NoError(t, os.Remove(filepath.Join(d, journalfile.CkptName)))
			pokeFile(t, filepath.Join(d, filepath.Base(segs[0])), journalfile.SegmentHeaderLength+journalfile.MagicOffset+2, 0x55)
		}, ErrCorrupt, "bad magic"},
		{"checkpoint garbage", func(d string) {
			require.NoError(t, os.WriteFile(filepath.Join(d, journalfile.CkptName), []byte("garbage"), 0o644))
		}, ErrCorrupt, "checkpoint of 7 bytes"},
		{"checkpoint past the end", func(d string) {
			jj := &Journal{dir: d, segSize: testSegment, opts: Options{Clock: func() int64 { return 0 }}}
			require.NoError(t, jj.writeCheckpoint(1<<40, 0))
		}, ErrCorrupt, "past the last segment"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := copyDir(t, dir)
			c.damage(d)
			_, err := Open(d, Options{SegmentSize: testSegment})
			require.Error(t, err)
			require.ErrorIs(t, err, c.want)
			require.Contains(t, err.Error(), c.text)
			if errors.Is(c.want, ErrCorrupt) || c.want == errMissingSegment {
				require.ErrorIs(t, err, duty.ErrCorrupt)
			}
			if r, err := Open(d, Options{ReadOnly: true}); err == nil { // readers: no panic either
				readAllLoose(r)
				require.NoError(t, r.Close())
			}
		})
	}
}

func pokeFile(t *testing.T, path string, off int64, v byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	defer f.Close()
	_, err = f.WriteAt([]byte{v}, off)
	require.NoError(t, err)
}

// A segment created just before a crash, never written, is removed.
func TestEmptySegmentPastTheEndIsRemoved(t *testing.T) {
	dir := testDir(t)
	ps := written(t, dir, 10)
	s, err := journalfile.CreateSegment(dir, testSegment, testSegment, 1)
	require.NoError(t, err)
	require.NoError(t, s.Release())
	j := openT(t, dir, Options{})
	require.Len(t, j.Recovery().RemovedSegments, 1)
	require.Equal(t, journalfile.Align(int64(journalfile.RecordHeaderLength+bodyLen(9)))+ps[9], j.Recovery().End)
	appendN(t, j, 1, 1000)
	require.Equal(t, map[uint32]int64{1: 1010}, readAll(t, j))
}

// readAllLoose reads until the tail or the first error.
func readAllLoose(j *Journal) {
	tl, err := j.NewTailer()
	if err != nil {
		return
	}
	defer tl.Close()
	for {
		if _, ok, err := tl.Next(); !ok || err != nil {
			return
		}
	}
}

// After RecoverTruncate cuts the log below the checkpoint, the checkpoint
// comes back to the cut, so records appended after it are verified at the
// next Open.
func TestTruncateBelowTheCheckpointMovesIt(t *testing.T) {
	dir := testDir(t)
	ps := written(t, dir, 400)
	poke(t, dir, ps[100], func(b []byte) { b[journalfile.RecordHeaderLength] ^= 1 })
	j := openT(t, dir, Options{Recovery: RecoverTruncate})
	require.Equal(t, int64(-1), j.Recovery().Truncated, "a CRC before the checkpoint is not checked at Open")
	require.NoError(t, j.Close())
	require.NoError(t, os.Remove(filepath.Join(dir, journalfile.CkptName)))
	j = openT(t, dir, Options{Recovery: RecoverTruncate})
	require.Equal(t, ps[100], j.Recovery().Truncated)
	appendN(t, j, 1, 3)
	require.NoError(t, j.Close()) // checkpoint at the new end
	ck, _, found, err := journalfile.ReadCheckpoint(dir, testSegment)
	require.NoError(t, err)
	require.True(t, found)
	require.Greater(t, ck, ps[100])
	// Tear the last appended record: a strict Open must see it (it is past
	// the checkpoint written at the cut, not before a stale one).
	require.NoError(t, os.Remove(filepath.Join(dir, journalfile.CkptName)))
	jj := &Journal{dir: dir, segSize: testSegment, opts: Options{Clock: func() int64 { return 0 }}}
	require.NoError(t, jj.writeCheckpoint(ps[100], 0))
	poke(t, dir, ps[102], func(b []byte) { b[journalfile.RecordHeaderLength] ^= 1 })
	j = openT(t, dir, Options{})
	require.Equal(t, ps[102], j.Recovery().TornAt)
}

// Close marks its checkpoint clean: the next Open trusts that nothing
// follows the end (it does not read the rest of the segment) and clears
// the mark before anything can be claimed, so a crash in the new session
// is recovered in full.
func TestCleanCloseMarksTheCheckpoint(t *testing.T) {
	dir := testDir(t)
	ps := written(t, dir, 10)
	end := ps[9] + journalfile.Align(int64(journalfile.RecordHeaderLength+bodyLen(9)))
	_, flags, found, err := journalfile.ReadCheckpoint(dir, testSegment)
	require.NoError(t, err)
	require.True(t, found)
	require.Equal(t, uint32(journalfile.CkptClean), flags)
	poke(t, dir, end+4096, func(b []byte) { b[0] = 1 }) // not read: trusted zero
	j := openT(t, dir, Options{})
	require.Zero(t, j.Recovery().TornBytes)
	_, flags, _, err = journalfile.ReadCheckpoint(dir, testSegment)
	require.NoError(t, err)
	require.Zero(t, flags, "cleared while the writer runs")
	require.NoError(t, j.Close())
	require.NoError(t, os.Remove(filepath.Join(dir, journalfile.CkptName)))
	poke(t, dir, end+4096, func(b []byte) { b[0] = 1 })
	j = openT(t, dir, Options{})
	require.Equal(t, int64(4097), j.Recovery().TornBytes, "without the mark the rest is read and zeroed")
}
