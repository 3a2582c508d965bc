package journal

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// Appending (Claim, fill, Commit) and reading (Tailer.Next) allocate
// nothing once a stream is known and the segment is mapped.
func TestAppendAndReadDoNotAllocate(t *testing.T) {
	j := openT(t, testDir(t), Options{SegmentSize: 1 << 20})
	_, _, err := j.Append(1, 1, make([]byte, 32))
	require.NoError(t, err)
	tl, err := j.NewTailer()
	require.NoError(t, err)
	defer tl.Close()
	_, ok, err := tl.Next()
	require.True(t, ok)
	require.NoError(t, err)

	const runs = 1000 // 2 x 1001 72-byte records: well inside the 1 MiB segment
	allocs := testing.AllocsPerRun(runs, func() {
		c, err := j.Claim(1, 2, 32)
		if err != nil {
			panic(err)
		}
		c.Body()[0] = 1
		if err := j.Commit(); err != nil {
			panic(err)
		}
	})
	require.Zero(t, allocs, "Claim+Commit")
	s, err := j.Stream(1)
	require.NoError(t, err)
	allocs = testing.AllocsPerRun(runs, func() {
		c, err := s.ClaimAt(2, 32, 1)
		if err != nil {
			panic(err)
		}
		c.Body()[0] = 1
		if err := j.Commit(); err != nil {
			panic(err)
		}
	})
	require.Zero(t, allocs, "Stream.ClaimAt+Commit")
	allocs = testing.AllocsPerRun(runs, func() {
		if _, ok, err := tl.Next(); !ok || err != nil {
			panic("no record")
		}
	})
	require.Zero(t, allocs, "Tailer.Next")
}

// A Flusher's duty cycle that indexes new records (and faults pages in
// ahead) allocates nothing either, between segment preparations.
func TestFlusherCycleDoesNotAllocate(t *testing.T) {
	j := openT(t, testDir(t), Options{SegmentSize: 1 << 20, PrefaultBytes: 64 << 10})
	f := j.Flusher()
	_, _, err := j.Append(1, 1, make([]byte, 32))
	require.NoError(t, err)
	_, err = f.DoWork()
	require.NoError(t, err)
	s, err := j.Stream(1)
	require.NoError(t, err)
	body := make([]byte, 200)
	allocs := testing.AllocsPerRun(1000, func() {
		if _, _, err := s.Append(1, body); err != nil {
			panic(err)
		}
		if _, err := f.DoWork(); err != nil {
			panic(fmt.Sprint("DoWork: ", err))
		}
	})
	require.Zero(t, allocs)
	// The cycles indexed (up to the lag they keep behind the appender).
	require.GreaterOrEqual(t, j.idx.t.Position(), j.CommittedPosition()-indexLag-int64(len(body))-64)
}
