package histogram

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/buildtags"
)

// Record, RecordN, Snapshot into a grown Snapshot, Sub, CopyTo into a
// grown Snapshot, ValueAtQuantile and Mean allocate nothing.
func TestNoAllocations(t *testing.T) {
	if buildtags.Race {
		t.Skip("the race detector allocates")
	}
	w, region := newRecorder(t, ns, "allocs")
	rd := newReader(t, region)
	v := int64(1)
	require.Zero(t, testing.AllocsPerRun(1000, func() {
		w.Record(v)
		w.RecordN(v*7, 2)
		w.Record(-v)
		v = v*3 + 1
		if v > 1<<40 {
			v = 1
		}
	}), "Record")

	var prev, cur, interval Snapshot
	require.NoError(t, rd.Snapshot(&prev))
	require.NoError(t, rd.Snapshot(&cur))
	cur.CopyTo(&interval)
	var sink int64
	var mean float64
	require.Zero(t, testing.AllocsPerRun(100, func() {
		w.Record(12345)
		if err := rd.Snapshot(&cur); err != nil {
			panic(err)
		}
		cur.CopyTo(&interval)
		if err := interval.Sub(&prev); err != nil {
			panic(err)
		}
		sink += interval.ValueAtQuantile(99.9) + cur.ValueAtQuantile(50)
		mean += cur.Mean()
		cur.CopyTo(&prev)
	}), "Snapshot")
	require.Equal(t, int64(1), interval.TotalCount)
	require.NotZero(t, sink)
	require.NotZero(t, mean)
}
