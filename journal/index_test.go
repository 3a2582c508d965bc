package journal

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/dutyrt/duty/internal/journalfile"
	"github.com/stretchr/testify/require"
)

// checkIndexes looks every record of every stream up through its index
// and compares with the log.
func checkIndexes(t *testing.T, j *Journal) {
	t.Helper()
	tl, err := j.NewTailer()
	require.NoError(t, err)
	defer tl.Close()
	for {
		r, ok, err := tl.Next()
		require.NoError(t, err)
		if !ok {
			return
		}
		e, err := j.Lookup(r.StreamID, r.Sequence)
		require.NoError(t, err, "stream %d seq %d", r.StreamID, r.Sequence)
		require.Equal(t, IndexEntry{Position: r.Position, Length: r.Length, TypeID: r.TypeID}, e)
	}
}

func threeStreams(t *testing.T, j *Journal, n int) {
	t.Helper()
	for i := range n {
		appendN(t, j, uint32(1+i%3), 1)
	}
}

func TestIndexFindsTheNthRecord(t *testing.T) {
	dir := testDir(t)
	j := openT(t, dir, Options{})
	threeStreams(t, j, 1500)
	n, err := j.indexUpTo(100)
	require.NoError(t, err)
	require.Equal(t, 100, n, "Index is bounded")
	checkIndexes(t, j) // Lookup indexes the rest first
	_, err = j.Lookup(1, 500)
	require.ErrorIs(t, err, ErrNotFound)
	_, err = j.Lookup(9, 0)
	require.ErrorIs(t, err, ErrNotFound)
	require.NoError(t, j.Close())

	j = openT(t, dir, Options{})
	require.False(t, j.Recovery().IndexRebuilt)
	require.Zero(t, j.Recovery().Indexed, "Close indexed everything")
	threeStreams(t, j, 30)
	checkIndexes(t, j)

	r := openT(t, dir, Options{ReadOnly: true}) // a reader reads the writer's index files
	require.NoError(t, j.Close())
	e, err := r.Lookup(2, 333)
	require.NoError(t, err)
	tl, err := r.NewTailer()
	require.NoError(t, err)
	defer tl.Close()
	require.NoError(t, tl.SeekSequence(2, 333))
	require.Equal(t, e.Position, tl.Position())
	rec, _, err := tl.Next()
	require.NoError(t, err)
	require.Equal(t, int64(333), rec.Sequence)
}

func TestIndexRebuiltWhenMissingBehindOrWrong(t *testing.T) {
	dir := testDir(t)
	j := openT(t, dir, Options{})
	threeStreams(t, j, 900)
	require.NoError(t, j.Close())
	idx := func(s uint32) string { return filepath.Join(dir, journalfile.IndexDirName, journalfile.IndexName(s)) }
	cases := []struct {
		name    string
		damage  func(d string)
		rebuilt bool
	}{
		{"intact", func(string) {}, false},
		{"missing directory", func(d string) { require.NoError(t, os.RemoveAll(filepath.Join(d, journalfile.IndexDirName))) }, true},
		{"missing stream file", func(d string) {
			require.NoError(t, os.Remove(filepath.Join(d, journalfile.IndexDirName, journalfile.IndexName(2))))
		}, true},
		{"behind", func(d string) {
			fi, err := os.Stat(idx(1))
			require.NoError(t, err)
			require.NoError(t, os.Truncate(filepath.Join(d, journalfile.IndexDirName, journalfile.IndexName(1)), fi.Size()-10*journalfile.IndexEntryLength))
		}, true},
		{"partial entry", func(d string) {
			fi, err := os.Stat(idx(3))
			require.NoError(t, err)
			require.NoError(t, os.Truncate(filepath.Join(d, journalfile.IndexDirName, journalfile.IndexName(3)), fi.Size()-3))
		}, true},
		{"pointing past the log", func(d string) {
			f, err := os.OpenFile(filepath.Join(d, journalfile.IndexDirName, journalfile.IndexName(1)), os.O_RDWR|os.O_APPEND, 0)
			require.NoError(t, err)
			var e [journalfile.IndexEntryLength]byte
			binary.LittleEndian.PutUint64(e[:], 1<<40)
			_, err = f.Write(e[:])
			require.NoError(t, err)
			require.NoError(t, f.Close())
		}, true},
		{"garbage header", func(d string) {
			require.NoError(t, os.WriteFile(filepath.Join(d, journalfile.IndexDirName, journalfile.IndexName(2)), make([]byte, 100), 0o644))
		}, true},
		{"garbage position", func(d string) {
			require.NoError(t, os.WriteFile(filepath.Join(d, journalfile.IndexDirName, "position"), []byte("x"), 0o644))
		}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := copyDir(t, dir)
			c.damage(d)
			j := openT(t, d, Options{})
			require.Equal(t, c.rebuilt, j.Recovery().IndexRebuilt, j.Recovery().String())
			checkIndexes(t, j)
			threeStreams(t, j, 10)
			checkIndexes(t, j)
		})
	}
}

// After RecoverTruncate cuts the log, the index (which was ahead of it)
// is rebuilt and appending continues the cut streams' sequences.
func TestIndexFollowsATruncatedLog(t *testing.T) {
	dir := testDir(t)
	ps := written(t, dir, 400)
	require.NoError(t, os.Remove(filepath.Join(dir, journalfile.CkptName)))
	poke(t, dir, ps[200], func(b []byte) { b[journalfile.RecordHeaderLength] ^= 1 })
	j := openT(t, dir, Options{Recovery: RecoverTruncate})
	require.True(t, j.Recovery().IndexRebuilt)
	_, err := j.Lookup(1, 200)
	require.ErrorIs(t, err, ErrNotFound)
	appendN(t, j, 1, 5)
	checkIndexes(t, j)
}

func TestLookupBehindRetention(t *testing.T) {
	j := openT(t, testDir(t), Options{RetainBytes: 2 * testSegment})
	threeStreams(t, j, 3000)
	_, err := j.indexUpTo(1 << 20)
	require.NoError(t, err)
	r, err := j.ApplyRetention()
	require.NoError(t, err)
	require.Greater(t, r.Deleted, 0)
	_, err = j.Lookup(1, 0)
	require.ErrorIs(t, err, ErrBehindRetention)
	tl, err := j.NewTailer()
	require.NoError(t, err)
	defer tl.Close()
	require.ErrorIs(t, tl.SeekSequence(1, 0), ErrBehindRetention)
	require.NoError(t, tl.SeekSequence(1, 999))
	checkIndexes(t, j)
}

// A damaged index entry (a position 8 bytes off, a wrong length or type)
// never answers wrongly: Lookup refuses it with ErrCorrupt, in the writer
// and in a read-only journal, SeekSequence still finds the record (by a
// walk), and the writer's next Open rebuilds the indexes.
func TestDamagedIndexEntryIsRefused(t *testing.T) {
	base := testDir(t)
	j := openT(t, base, Options{})
	appendN(t, j, 7, 500)
	appendN(t, j, 1, 10)
	want, err := j.Lookup(7, 401)
	require.NoError(t, err)
	prev, err := j.Lookup(7, 400)
	require.NoError(t, err)
	require.NoError(t, j.Close())
	for _, c := range []struct {
		name string
		off  int64
		f    func(b []byte)
	}{
		{"position 8 bytes off", 0, func(b []byte) { binary.LittleEndian.PutUint64(b, binary.LittleEndian.Uint64(b)+8) }},
		{"length", 8, func(b []byte) { b[0] ^= 4 }},
		{"type", 12, func(b []byte) { b[0] ^= 1 }},
		{"position of another record", 0, func(b []byte) { binary.LittleEndian.PutUint64(b, uint64(prev.Position)) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := copyDir(t, base)
			path := filepath.Join(dir, journalfile.IndexDirName, journalfile.IndexName(7))
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			c.f(b[journalfile.IndexHeaderLength+401*journalfile.IndexEntryLength+c.off:])
			require.NoError(t, os.WriteFile(path, b, 0o644))

			for _, ro := range []bool{true, false} {
				jj := openT(t, dir, Options{ReadOnly: ro})
				_, err := jj.Lookup(7, 401)
				require.ErrorIs(t, err, ErrCorrupt, "read-only %v", ro)
				e, err := jj.Lookup(7, 400)
				require.NoError(t, err, "the other entries answer")
				require.Less(t, e.Position, want.Position)
				tl, err := jj.NewTailer()
				require.NoError(t, err)
				require.NoError(t, tl.SeekSequence(7, 401))
				require.Equal(t, want.Position, tl.Position())
				r, ok, err := tl.Next()
				require.NoError(t, err)
				require.True(t, ok)
				require.Equal(t, int64(401), r.Sequence)
				require.NoError(t, tl.Close())
				require.NoError(t, jj.Close())
			}
			jj := openT(t, dir, Options{})
			require.True(t, jj.Recovery().IndexRebuilt, jj.Recovery().String())
			e, err := jj.Lookup(7, 401)
			require.NoError(t, err)
			require.Equal(t, want, e)
			checkIndexes(t, jj)
		})
	}
}

// The Flusher's indexer stays indexLag behind a writer that is appending
// (it would otherwise read the cache lines the appender writes) and goes
// to the end once the writer pauses; a reader in another process sees the
// index files it wrote.
func TestFlusherIndexTrailsTheAppender(t *testing.T) {
	dir := testDir(t)
	j := openT(t, dir, Options{})
	r := openT(t, dir, Options{ReadOnly: true})
	f := j.Flusher()
	lookup := func(seq int64) error { _, err := r.Lookup(1, seq); return err }
	var positions []int64
	for j.CommittedPosition() < 4*indexLag { // fewer records than a cycle indexes
		positions = append(positions, j.CommittedPosition())
		_, _, err := j.Append(1, 7, make([]byte, 1000))
		require.NoError(t, err)
	}
	require.Less(t, len(positions), indexBatch)
	_, err := f.DoWork() // the committed position moved since the last cycle
	require.NoError(t, err)
	last := int64(len(positions) - 1)
	require.NoError(t, lookup(0))
	require.ErrorIs(t, lookup(last), ErrNotFound, "the record the appender wrote last")
	for seq, p := range positions { // indexed exactly up to the lag
		require.Equal(t, p < j.CommittedPosition()-indexLag, lookup(int64(seq)) == nil, "seq %d at %d", seq, p)
	}
	_, err = f.DoWork() // the writer paused: to the end
	require.NoError(t, err)
	require.NoError(t, lookup(last))
}
