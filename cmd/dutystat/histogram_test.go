package main

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/histogram"
	"github.com/dutyrt/duty/ipc"
)

// A histograms file: dutystat prints p50, p90, p99, p99.9 and max of each
// histogram, -json carries them, and the exporter serves a histogram in seconds with a summary of the exact
// percentiles.
func TestHistograms(t *testing.T) {
	dir := t.TempDir()
	cfg := histogram.Config{Lowest: 1, Highest: 1_000_000, SignificantFigures: 3}
	hf, err := ipc.CreateHistograms(dir, "latency", []ipc.HistogramSpec{
		{Label: "tick-to-trade ns", Config: cfg},
		{Label: "idle", Config: cfg},
	})
	require.NoError(t, err)
	t.Cleanup(func() { hf.Close() })
	rec := hf.Recorder(0)
	for v := int64(1); v <= 1000; v++ {
		rec.Record(v)
	}
	rec.Record(5_000_000) // clamped at Highest

	out := runOK(t, defaultEnv(), "-dir", dir, "-window", "0")
	t.Log("\n" + out)
	require.Contains(t, out, "latency: 2 histograms")
	require.Regexp(t, regexp.MustCompile(`(?m)^\s*1001\s+501\s+901\s+991\s+1000\s+1000000\s+1\s+tick-to-trade ns$`), out)
	require.Regexp(t, regexp.MustCompile(`(?m)^\s*0\s+0\s+0\s+0\s+0\s+0\s+0\s+idle$`), out)

	var f frame
	require.NoError(t, json.Unmarshal([]byte(runOK(t, defaultEnv(), "-dir", dir, "-json", "-window", "0")), &f))
	require.Len(t, f.Files, 1)
	require.Equal(t, "histograms", f.Files[0].Kind)
	h := f.Files[0].Histograms[0]
	require.Equal(t, int64(1001), h.Count)
	require.Equal(t, int64(1), h.Clamped)
	require.Equal(t, percentile{Quantile: 50, Value: 501}, h.Percentiles[0]) // HdrHistogram's answer
	require.Equal(t, int64(1_000_000), h.Max, "the clamped value, at the bound")

	fams := scrape(t, dir)
	n, ok := value(fams, "duty_latency_seconds", map[string]string{"file": "latency", "histogram": "tick-to-trade"})
	require.True(t, ok)
	require.Equal(t, 1001.0, n)
	clamped, ok := value(fams, "duty_histogram_clamped_total", map[string]string{"file": "latency", "histogram": "tick-to-trade"})
	require.True(t, ok)
	require.Equal(t, 1.0, clamped)
	var q99 float64
	for _, m := range fams["duty_latency_percentiles_seconds"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetValue() == "tick-to-trade" {
				for _, q := range m.GetSummary().GetQuantile() {
					if q.GetQuantile() == 0.99 {
						q99 = q.GetValue()
					}
				}
			}
		}
	}
	require.InDelta(t, 991e-9, q99, 1e-18)
	_, ok = value(fams, "duty_recorded_values", map[string]string{"file": "latency", "histogram": "idle"})
	require.True(t, ok, "a histogram whose label names no unit")
}
