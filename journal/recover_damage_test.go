package journal

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dutyrt/duty/internal/journalfile"
	"github.com/stretchr/testify/require"
)

// lastSegmentRecords returns the positions of ps that lie in the last
// segment.
func lastSegmentRecords(ps []int64) []int64 {
	last := ps[len(ps)-1] &^ (testSegment - 1)
	var in []int64
	for _, p := range ps {
		if p&^(testSegment-1) == last {
			in = append(in, p)
		}
	}
	return in
}

// countRecords reads every record from the start (the journal's Tailer
// verifies each CRC) and returns the sequences of stream 1 it found.
func countRecords(t *testing.T, j *Journal) map[int64]bool {
	t.Helper()
	tl, err := j.NewTailer()
	require.NoError(t, err)
	defer tl.Close()
	seen := map[int64]bool{}
	for {
		r, ok, err := tl.Next()
		require.NoError(t, err)
		if !ok {
			return seen
		}
		require.NoError(t, checkBody(r.Body, r.StreamID, r.Sequence))
		seen[r.Sequence] = true
	}
}

// Damage in the last segment, with valid records after it, is corruption
// in the middle, not a torn tail: a strict Open fails naming the damaged
// record and changes nothing; RecoverSkip keeps every valid record after
// it. With a clean Close's checkpoint (the walk before it reads headers
// only) and without a checkpoint (a crash: everything verified).
func TestDamageInTheLastSegmentIsNotATornTail(t *testing.T) {
	base := testDir(t)
	ps := written(t, base, 400)
	in := lastSegmentRecords(ps)
	require.Greater(t, len(in), 40)
	mid := in[len(in)/2]
	midSeq := int64(0)
	for k, p := range ps {
		if p == mid {
			midSeq = int64(k)
		}
	}
	segStart := mid &^ (testSegment - 1)
	page := segStart + (mid-segStart)&^4095
	if page <= segStart+journalfile.SegmentHeaderLength {
		page += 4096
	}
	require.Less(t, page+4096, ps[len(ps)-1], "the lost page must have records after it")
	// The record the lost page starts in, and the first one after it.
	pageRec, pageSeq, afterSeq := int64(0), int64(0), int64(0)
	for k, p := range ps {
		if p <= page {
			pageRec, pageSeq = p, int64(k)
		}
		if p >= page+4096 && afterSeq == 0 {
			afterSeq = int64(k)
		}
	}

	cases := []struct {
		name   string
		damage func(d string)
		at     int64
		lost   []int64 // sequences RecoverSkip loses: [from, to)
	}{
		{"length word high bit", func(d string) { poke(t, d, mid, func(b []byte) { b[2] ^= 0x10 }) }, mid, []int64{midSeq, midSeq + 1}},
		{"length word low bit", func(d string) { poke(t, d, mid, func(b []byte) { b[0] ^= 0x08 }) }, mid, []int64{midSeq, midSeq + 1}},
		{"length word zeroed", func(d string) { poke(t, d, mid, func(b []byte) { clear(b[:4]) }) }, mid, []int64{midSeq, midSeq + 1}},
		{"lost page", func(d string) { poke(t, d, page, func(b []byte) { clear(b[:4096]) }) }, pageRec, []int64{pageSeq, afterSeq}},
	}
	for _, c := range cases {
		for _, ckpt := range []bool{true, false} {
			name := c.name + map[bool]string{true: ", clean checkpoint", false: ", no checkpoint"}[ckpt]
			t.Run(name, func(t *testing.T) {
				dir := copyDir(t, base)
				if !ckpt {
					require.NoError(t, os.Remove(filepath.Join(dir, journalfile.CkptName)))
				}
				c.damage(dir)
				segPath := filepath.Join(dir, journalfile.SegmentName(segStart))
				before, err := os.ReadFile(segPath)
				require.NoError(t, err)

				_, err = Open(dir, Options{SegmentSize: testSegment, Logger: quiet})
				var ce *corruptError
				require.ErrorAs(t, err, &ce, "strict Open must refuse damage with valid records after it")
				require.Equal(t, c.at, ce.Position, err.Error())
				after, rerr := os.ReadFile(segPath)
				require.NoError(t, rerr)
				require.Equal(t, before, after, "a refused Open changes nothing")

				j := openT(t, dir, Options{Recovery: RecoverSkip})
				r := j.Recovery()
				require.Equal(t, []int64{c.at}, r.Skipped, r.String())
				require.Equal(t, int64(-1), r.TornAt, r.String())
				seen := countRecords(t, j)
				for seq := range int64(400) {
					lost := seq >= c.lost[0] && seq < c.lost[1]
					require.Equal(t, !lost, seen[seq], "sequence %d", seq)
				}
				appendN(t, j, 1, 1)
				require.Equal(t, int64(401), j.nextSequence(1))
				require.NoError(t, j.Close())
				j2 := openT(t, dir, Options{}) // the padding stays: strict goes through
				require.Empty(t, j2.Recovery().Skipped)
			})
		}
	}
}

// A checkpoint past the log's end inside the last segment is ErrCorrupt
// for a strict Open, not a torn tail; the other modes do not believe it,
// say so in the report, and replace it.
func TestCheckpointPastTheEndInTheLastSegment(t *testing.T) {
	base := testDir(t)
	ps := written(t, base, 400)
	end := ps[len(ps)-1] + journalfile.Align(int64(journalfile.RecordHeaderLength+bodyLen(399)))
	require.Less(t, end+4096, ps[len(ps)-1]&^(testSegment-1)+testSegment)
	jj := &Journal{dir: base, segSize: testSegment, opts: Options{Clock: func() int64 { return 0 }}}
	require.NoError(t, jj.writeCheckpoint(end+4096, 0))

	dir := copyDir(t, base)
	_, err := Open(dir, Options{SegmentSize: testSegment, Logger: quiet})
	var ce *corruptError
	require.ErrorAs(t, err, &ce)
	require.ErrorIs(t, err, ErrCorrupt)
	require.Equal(t, end, ce.Position)
	require.Contains(t, err.Error(), "checkpoint")

	for _, mode := range []RecoveryMode{RecoverSkip, RecoverTruncate} {
		dir := copyDir(t, base)
		j := openT(t, dir, Options{Recovery: mode})
		r := j.Recovery()
		require.ErrorIs(t, r.CheckpointError, ErrCorrupt)
		require.Equal(t, end, r.End)
		require.Contains(t, r.String(), "checkpoint")
		require.Len(t, countRecords(t, j), 400)
		require.NoError(t, j.Close())
		ck, _, found, err := journalfile.ReadCheckpoint(dir, testSegment)
		require.NoError(t, err)
		require.True(t, found)
		require.LessOrEqual(t, ck, end+journalfile.Align(int64(journalfile.RecordHeaderLength)), "the checkpoint was replaced")
	}
}

// A read-only reader's Skip does not trust a damaged length word: it goes
// to the next valid record, and the records after it are read.
func TestSkipDoesNotTrustADamagedLength(t *testing.T) {
	for _, name := range []string{"high bit", "low bit"} {
		t.Run(name, func(t *testing.T) {
			dir := testDir(t)
			ps := written(t, dir, 400)
			in := lastSegmentRecords(ps)
			mid := in[len(in)/2]
			poke(t, dir, mid, func(b []byte) {
				if name == "high bit" {
					b[2] ^= 0x10
				} else {
					b[0] ^= 0x08
				}
			})
			j := openT(t, dir, Options{ReadOnly: true})
			tl, err := j.NewTailer()
			require.NoError(t, err)
			defer tl.Close()
			n, skipped := 0, 0
			for {
				r, ok, err := tl.Next()
				if err != nil {
					var ce *corruptError
					require.ErrorAs(t, err, &ce)
					require.Equal(t, mid, ce.Position)
					_, err := tl.Skip()
					require.NoError(t, err)
					skipped++
					require.Equal(t, 1, skipped, "one skip steps over the damage")
					continue
				}
				if !ok {
					break
				}
				require.NoError(t, checkBody(r.Body, r.StreamID, r.Sequence))
				n++
			}
			require.Equal(t, 1, skipped)
			require.Equal(t, 399, n, "every other record is read")
		})
	}
}

// A segment whose header never reached the disk (named by a rename the
// file system wrote first, then a machine crash) is rebuilt from its name
// and size by a writer's Open, in every recovery mode, with every record
// kept; a read-only reader before that gets a clear ErrCorrupt.
func TestZeroedSegmentHeaderIsRebuilt(t *testing.T) {
	dir := testDir(t)
	written(t, dir, 1000)
	segs, _ := filepath.Glob(filepath.Join(dir, "*.seg"))
	require.Greater(t, len(segs), 3)
	zeroed := []string{segs[1], segs[len(segs)-1]}
	for _, p := range zeroed {
		f, err := os.OpenFile(p, os.O_WRONLY, 0)
		require.NoError(t, err)
		_, err = f.WriteAt(make([]byte, journalfile.SegmentHeaderLength), 0)
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	_, err := Open(dir, Options{ReadOnly: true})
	require.ErrorIs(t, err, ErrCorrupt)
	require.ErrorContains(t, err, "header never written")

	j := openT(t, dir, Options{}) // strict
	require.Equal(t, zeroed, j.Recovery().HeadersRebuilt)
	require.Contains(t, j.Recovery().String(), "segment headers rebuilt")
	require.Equal(t, map[uint32]int64{1: 1000}, readAll(t, j))
	require.NoError(t, j.Close())
	j = openT(t, dir, Options{})
	require.Empty(t, j.Recovery().HeadersRebuilt, "rebuilt once")
	require.Equal(t, map[uint32]int64{1: 1000}, readAll(t, j))
}
