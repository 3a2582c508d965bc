package journal

import (
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

	const runs = 1000 // 72-byte records: well inside the 1 MiB segment
	allocs := testing.AllocsPerRun(runs, func() {
		c, err := j.Claim(1, 2, 32)
		if err != nil {
			panic(err)
		}
		c.Body[0] = 1
		if err := j.Commit(); err != nil {
			panic(err)
		}
	})
	require.Zero(t, allocs, "Claim+Commit")
	allocs = testing.AllocsPerRun(runs, func() {
		if _, ok, err := tl.Next(); !ok || err != nil {
			panic("no record")
		}
	})
	require.Zero(t, allocs, "Tailer.Next")
}
