package journal

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// SeekTime by binary search over segments finds what a walk of the log
// finds: the first record stamped at or after the time, for times before
// the log, between records, on a record, in every segment and after the
// log; the same from a reader's journal opened in this process
// (ReadOnly), and after retention has deleted the oldest segments.
func TestSeekTimeAgreesWithAWalk(t *testing.T) {
	dir := testDir(t)
	stamp := int64(1_000)
	j := openT(t, dir, Options{Clock: func() int64 { return stamp }})
	const n = 20_000 // about a dozen 64 KiB segments
	stamps := make([]int64, 0, n)
	positions := make([]int64, 0, n)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range n {
		stamp += int64(rng.IntN(3)) * 10 // steps of 0, 10 or 20: equal stamps too
		pos, _, err := j.Append(uint32(1+i%3), 1, make([]byte, 1+rng.IntN(40)))
		require.NoError(t, err)
		stamps = append(stamps, stamp)
		positions = append(positions, pos)
	}
	// The first record stamped at or after ts, by a linear scan of what
	// was appended (from index from on).
	want := func(from int, ts int64) (int64, bool) {
		for i := from; i < n; i++ {
			if stamps[i] >= ts {
				return positions[i], true
			}
		}
		return 0, false
	}
	reader, err := Open(dir, Options{ReadOnly: true, SegmentSize: testSegment, Logger: quiet})
	require.NoError(t, err)
	defer reader.Close()
	check := func(jj *Journal, from int) {
		t.Helper()
		tl, err := jj.NewTailer()
		require.NoError(t, err)
		defer tl.Close()
		times := []int64{0, stamps[from] - 1, stamps[from], stamps[n-1], stamps[n-1] + 1}
		for range 200 {
			i := from + rng.IntN(n-from)
			times = append(times, stamps[i], stamps[i]-1, stamps[i]+1)
		}
		for _, ts := range times {
			p, ok := want(from, ts)
			err := tl.SeekTime(ts)
			if !ok {
				require.ErrorIs(t, err, ErrNotFound, "time %d", ts)
				continue
			}
			require.NoError(t, err, "time %d", ts)
			require.Equal(t, p, tl.Position(), "time %d", ts)
			r, ok, err := tl.Next()
			require.NoError(t, err)
			require.True(t, ok)
			require.GreaterOrEqual(t, r.Timestamp, ts)
		}
	}
	check(j, 0)
	check(reader, 0)

	require.NoError(t, j.Close())
	j = openT(t, dir, Options{RetainBytes: 4 * testSegment, Clock: func() int64 { return stamp }})
	r, err := j.ApplyRetention()
	require.NoError(t, err)
	require.Greater(t, r.Deleted, 0)
	from := 0
	for positions[from] < j.firstPosition() {
		from++
	}
	check(j, from)
}
