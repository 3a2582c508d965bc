package main

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func seq(n int) []int64 {
	s := make([]int64, n)
	for i := range s {
		s[i] = int64(i + 1)
	}
	return s
}

func TestPercentileNearestRank(t *testing.T) {
	s := seq(1000) // values 1..1000: the value is the rank
	require.Equal(t, int64(500), percentile(s, 500))
	require.Equal(t, int64(900), percentile(s, 900))
	require.Equal(t, int64(990), percentile(s, 990))
	require.Equal(t, int64(999), percentile(s, 999), "p99.9 of 1000 is the 999th, not the max")
	require.Equal(t, int64(1000), percentile(s, 1000))

	s = seq(10)
	require.Equal(t, int64(5), percentile(s, 500))  // ceil(5) = 5
	require.Equal(t, int64(10), percentile(s, 999)) // ceil(9.99) = 10
	require.Equal(t, int64(1), percentile(s, 1))    // ceil(0.01) = 1

	s = seq(7)
	require.Equal(t, int64(4), percentile(s, 500)) // ceil(3.5) = 4
	require.Equal(t, int64(7), percentile(s, 900)) // ceil(6.3) = 7

	require.Equal(t, int64(42), percentile([]int64{42}, 500))
	require.Equal(t, int64(0), percentile(nil, 500))
}

func TestLatencySummary(t *testing.T) {
	lat := []int64{5, 1, 4, 2, 3, 10, 9, 8, 7, 6} // unsorted
	m := latencySummary(lat)
	require.Equal(t, 5.0, m[metricP50])
	require.Equal(t, 9.0, m[metricP90])
	require.Equal(t, 10.0, m[metricP99])
	require.Equal(t, 10.0, m[metricP999])
	require.Equal(t, 10.0, m[metricMax])
	require.Equal(t, 5.5, m[metricMean])
	require.IsNonDecreasing(t, lat, "sorted in place")
}

func TestPhaseOf(t *testing.T) {
	for _, c := range []struct {
		ns   float64
		want string
	}{
		{46, phaseNear}, {74.9, phaseNear}, {75, phaseMid}, {109, phaseMid}, {250, phaseMid},
		{250.1, phaseFar}, {493, phaseFar}, {math.NaN(), phaseUnprobed},
	} {
		require.Equal(t, c.want, phaseOf(c.ns), "%v ns", c.ns)
	}
}

func TestLabelPhase(t *testing.T) {
	require.Equal(t, phaseMid, labelPhase(109, 140))
	require.Equal(t, phaseFar, labelPhase(493, 480))
	require.Equal(t, phaseNear, labelPhase(46, 50))
	require.Equal(t, phaseMixed, labelPhase(109, 493), "before and after disagree")
	require.Equal(t, phaseMixed, labelPhase(46, 109))
	require.Equal(t, phaseUnprobed, labelPhase(math.NaN(), math.NaN()))
}

func TestMedian(t *testing.T) {
	require.Equal(t, 3.0, median([]float64{5, 1, 3}))
	require.Equal(t, 2.5, median([]float64{4, 1, 3, 2}))
	require.Equal(t, 7.0, median([]float64{7}))
	require.True(t, math.IsNaN(median(nil)))
	xs := []float64{3, 1, 2}
	median(xs)
	require.Equal(t, []float64{3, 1, 2}, xs, "input not modified")
}

// throughputReps builds throughput repetitions from (variant, phase,
// value) triples.
func throughputReps(triples ...any) []repetition {
	var out []repetition
	for i := 0; i+2 < len(triples); i += 3 {
		out = append(out, repetition{Variant: triples[i].(string), Phase: triples[i+1].(string), Value: triples[i+2].(float64)})
	}
	return out
}

func TestAggregateThroughput(t *testing.T) {
	reps := throughputReps("chan", phaseMid, 20.0, "chan", phaseMid, 18.0, "chan", phaseMid, 25.0,
		"chan", phaseFar, 6.0, "chan", phaseMixed, 11.0)
	got := aggregate(reps, false)
	require.Equal(t, map[string]map[string]float64{
		phaseMid:   {metricMedian: 20, metricMin: 18, metricMax: 25, metricN: 3},
		phaseFar:   {metricMedian: 6, metricMin: 6, metricMax: 6, metricN: 1},
		phaseMixed: {metricMedian: 11, metricMin: 11, metricMax: 11, metricN: 1},
	}, got)
}

func TestAggregateLatency(t *testing.T) {
	lat := func(p50, max float64) map[string]float64 {
		return map[string]float64{metricP50: p50, metricP90: p50 + 1, metricP99: p50 + 2, metricP999: p50 + 3, metricMax: max, metricMean: p50}
	}
	reps := []repetition{
		{Phase: phaseMid, Latency: lat(200, 5000)},
		{Phase: phaseMid, Latency: lat(210, 1000)},
		{Phase: phaseMid, Latency: lat(300, 9000)},
		{Phase: phaseFar, Latency: lat(500, 700)},
	}
	got := aggregate(reps, true)
	require.Equal(t, map[string]float64{metricN: 3, metricP50: 210, metricP90: 211, metricP99: 212, metricP999: 213, metricMax: 5000, metricMean: 210}, got[phaseMid],
		"each metric is the median over the phase's repetitions")
	require.Equal(t, 1.0, got[phaseFar][metricN])
	require.Equal(t, 500.0, got[phaseFar][metricP50])
}

func TestRatiosOnlyWithinSharedPhases(t *testing.T) {
	vs := []VariantReport{
		{Name: "chan", Phases: map[string]map[string]float64{
			phaseMid:   {metricMedian: 20, metricN: 3},
			phaseFar:   {metricMedian: 5, metricN: 2},
			phaseMixed: {metricMedian: 10, metricN: 1},
		}},
		{Name: "onetoone-write", Phases: map[string]map[string]float64{
			phaseMid:   {metricMedian: 60, metricN: 3},
			phaseNear:  {metricMedian: 90, metricN: 1}, // baseline has no near: no ratio
			phaseMixed: {metricMedian: 30, metricN: 1}, // mixed: never compared
		}},
		{Name: "batch16", Phases: map[string]map[string]float64{
			phaseFar: {metricMedian: 20, metricN: 1},
		}},
	}
	got := ratios(vs, []string{metricMedian})
	require.Equal(t, []Ratio{
		{Variant: "onetoone-write", Baseline: "chan", Phase: phaseMid, Metric: metricMedian, Ratio: 3},
		{Variant: "batch16", Baseline: "chan", Phase: phaseFar, Metric: metricMedian, Ratio: 4},
	}, got)

	require.Nil(t, ratios(vs[:1], []string{metricMedian}), "a baseline alone has no ratio")
	zero := []VariantReport{
		{Name: "chan", Phases: map[string]map[string]float64{phaseMid: {metricMedian: 0}}},
		{Name: "x", Phases: map[string]map[string]float64{phaseMid: {metricMedian: 3}}},
	}
	require.Empty(t, ratios(zero, []string{metricMedian}), "a zero baseline gives no ratio")
}

func TestLatencyRatios(t *testing.T) {
	vs := []VariantReport{
		{Name: "chan", Phases: map[string]map[string]float64{phaseMid: {metricP50: 250, metricP999: 2500, metricMax: 9}}},
		{Name: "onetoone", Phases: map[string]map[string]float64{phaseMid: {metricP50: 200, metricP999: 500, metricMax: 1}}},
	}
	got := ratios(vs, latencyRatioMetrics)
	require.Equal(t, []Ratio{
		{Variant: "onetoone", Baseline: "chan", Phase: phaseMid, Metric: metricP50, Ratio: 0.8},
		{Variant: "onetoone", Baseline: "chan", Phase: phaseMid, Metric: metricP999, Ratio: 0.2},
	}, got, "only metrics both sides have; never max")
}
