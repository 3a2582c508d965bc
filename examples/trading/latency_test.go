package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPercentilesNearestRank: the final table's percentiles are
// nearest-rank: the p-th percentile of n values is the ⌈p·n/100⌉-th
// smallest. Of 10, 20, ... 60 µs, p90 is the 6th (60 µs), not the 5th.
func TestPercentilesNearestRank(t *testing.T) {
	t2t, err := heapLatency("t2t")
	require.NoError(t, err)
	t2o, err := heapLatency("t2o")
	require.NoError(t, err)
	for v := int64(1); v <= 6; v++ {
		t2t.record(v*10_000, 0)
	}
	for v := int64(1); v <= 1000; v++ {
		t2o.record(v*1_000, 0)
	}
	r := result{t2t: t2t.total(), t2o: t2o.total()}
	var out bytes.Buffer
	r.print(&out, config{})
	rows := map[string][]string{}
	for line := range strings.SplitSeq(out.String(), "\n") {
		if f := strings.Fields(line); len(f) == 7 && strings.HasPrefix(f[0], "tick-to-") {
			rows[f[0]] = f[1:]
		}
	}
	//                                       count  p50     p90     p99     p99.9   max
	require.Equal(t, []string{"6", "30µs", "60µs", "60µs", "60µs", "60µs"}, rows["tick-to-trade"])
	require.Equal(t, []string{"1000", "500µs", "900µs", "990µs", "999µs", "1.0ms"}, rows["tick-to-order"])
}

// TestStageSampleShare: stageSampled picks about one timestamp in
// stageSampleEvery, from a clock counting nanoseconds and from one that
// only counts microseconds alike.
func TestStageSampleShare(t *testing.T) {
	for _, step := range []int64{1, 1000} {
		const n = 1 << 16
		picked := 0
		for i := range int64(n) {
			if stageSampled(1_700_000_000_000 + i*step) {
				picked++
			}
		}
		want := n / stageSampleEvery
		require.InDelta(t, want, picked, float64(want)/10, "step %d ns", step)
	}
}
