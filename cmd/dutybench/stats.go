package main

import (
	"math"
	"slices"
)

// Phases of the machine's inter-core latency, from the c2c probe
// (docs/workloads.md, "The c2c probe and phases").
const (
	phaseNear     = "near"     // probe < 75 ns
	phaseMid      = "mid"      // 75 ns <= probe <= 250 ns
	phaseFar      = "far"      // probe > 250 ns
	phaseMixed    = "mixed"    // the probes before and after a repetition disagree
	phaseUnprobed = "unprobed" // fewer than two CPUs: no probe possible
	nearBelowNs   = 75
	farAboveNs    = 250
)

// phaseOrder is the order in which phases are reported.
var phaseOrder = []string{phaseNear, phaseMid, phaseFar, phaseMixed, phaseUnprobed}

// comparablePhases are those in which ratios are computed: a mixed
// repetition's figure belongs to no phase.
var comparablePhases = []string{phaseNear, phaseMid, phaseFar}

// phaseOf labels one probe result (ns per round trip); NaN is unprobed.
func phaseOf(ns float64) string {
	switch {
	case math.IsNaN(ns):
		return phaseUnprobed
	case ns < nearBelowNs:
		return phaseNear
	case ns <= farAboveNs:
		return phaseMid
	default:
		return phaseFar
	}
}

// labelPhase labels a repetition from the probes taken before and after it.
func labelPhase(before, after float64) string {
	a, b := phaseOf(before), phaseOf(after)
	if a != b {
		return phaseMixed
	}
	return a
}

// median returns the median of xs (the mean of the two middle values for an
// even count), NaN for none. xs is not modified.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}

// Metric names, as in the JSON "phases" objects and ratios.
const (
	metricMedian = "median"
	metricMin    = "min"
	metricMax    = "max"
	metricN      = "n"
	metricP50    = "p50"
	metricP90    = "p90"
	metricP99    = "p99"
	metricP999   = "p999"
	metricMean   = "mean"
)

// latencyMetrics are a latency repetition's figures, in report order.
var latencyMetrics = []string{metricP50, metricP90, metricP99, metricP999, metricMax, metricMean}

// latencyRatioMetrics are those compared with the baseline: not max, one
// sample, usually a preemption or an interrupt.
var latencyRatioMetrics = []string{metricP50, metricP90, metricP99, metricP999, metricMean}

// percentile returns the nearest-rank percentile of sorted (ascending) for
// perMille in (0, 1000]: the value at rank ceil(perMille/1000 * len),
// 1-based, in integers so that p99.9 of 1000 samples is the 999th. It
// returns 0 for no samples.
func percentile(sorted []int64, perMille int) int64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	rank := max(1, min((perMille*n+999)/1000, n))
	return sorted[rank-1]
}

// latencySummary sorts lat in place and returns its latencyMetrics (ns).
func latencySummary(lat []int64) map[string]float64 {
	slices.Sort(lat)
	if len(lat) == 0 {
		return map[string]float64{}
	}
	var sum float64
	for _, v := range lat {
		sum += float64(v)
	}
	return map[string]float64{
		metricP50:  float64(percentile(lat, 500)),
		metricP90:  float64(percentile(lat, 900)),
		metricP99:  float64(percentile(lat, 990)),
		metricP999: float64(percentile(lat, 999)),
		metricMax:  float64(lat[len(lat)-1]),
		metricMean: sum / float64(len(lat)),
	}
}

// repetition is one timed run of one variant.
type repetition struct {
	Variant       string
	Before, After float64 // the probes, ns per round trip (NaN: none)
	Phase         string
	Value         float64            // throughput: Mmsg/s
	Latency       map[string]float64 // latency: latencySummary
	Preempted     int64              // involuntary context switches (the progress log only)
}

// aggregate groups one variant's repetitions by phase and returns for each
// phase n and, for throughput, the median, min and max; for latency, the
// median over the repetitions of each latency metric.
func aggregate(reps []repetition, latency bool) map[string]map[string]float64 {
	by := map[string][]repetition{}
	for _, r := range reps {
		by[r.Phase] = append(by[r.Phase], r)
	}
	out := map[string]map[string]float64{}
	for phase, rs := range by {
		m := map[string]float64{metricN: float64(len(rs))}
		vs := make([]float64, len(rs))
		if latency {
			for _, metric := range latencyMetrics {
				for i, r := range rs {
					vs[i] = r.Latency[metric]
				}
				m[metric] = median(vs)
			}
		} else {
			for i, r := range rs {
				vs[i] = r.Value
			}
			m[metricMedian], m[metricMin], m[metricMax] = median(vs), slices.Min(vs), slices.Max(vs)
		}
		out[phase] = m
	}
	return out
}

// Ratio compares a variant with the workload's baseline in one phase of the
// same run.
type Ratio struct {
	Variant  string  `json:"variant"`
	Baseline string  `json:"baseline"`
	Phase    string  `json:"phase"`
	Metric   string  `json:"metric"`
	Ratio    float64 `json:"ratio"`
}

// ratios returns, for every variant after the first (the baseline), every
// comparable phase both have, and every metric in metrics, the variant's
// figure over the baseline's; a missing phase or a zero baseline figure
// yields none.
func ratios(variants []VariantReport, metrics []string) []Ratio {
	if len(variants) < 2 {
		return nil
	}
	base := variants[0]
	var out []Ratio
	for _, v := range variants[1:] {
		for _, phase := range comparablePhases {
			bp, ok1 := base.Phases[phase]
			vp, ok2 := v.Phases[phase]
			if !ok1 || !ok2 {
				continue
			}
			for _, metric := range metrics {
				b, okb := bp[metric]
				x, okx := vp[metric]
				if !okb || !okx || b == 0 || math.IsNaN(b) || math.IsNaN(x) {
					continue
				}
				out = append(out, Ratio{Variant: v.Name, Baseline: base.Name, Phase: phase, Metric: metric, Ratio: x / b})
			}
		}
	}
	return out
}
