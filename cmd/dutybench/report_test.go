package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// jsonShapeExample is a report in the shape docs/benchmarks.md describes
// ("JSON shape"), without the optional host.
const jsonShapeExample = `{"workloads": [
  {"name": "w1", "unit": "Mmsg/s",
   "variants": [{"name": "chan",
                 "phases": {"mid": {"median": 18.9, "min": 16.4, "max": 23.0, "n": 11}, "far": {"median": 6, "min": 5, "max": 7, "n": 2}}}],
   "ratios": [{"variant": "onetoone-write", "baseline": "chan", "phase": "mid",
               "metric": "median", "ratio": 1.8}]},
  {"name": "w3", "unit": "ns",
   "variants": [{"name": "onetoone",
                 "phases": {"mid": {"p50": 210, "p90": 250, "p99": 286, "p999": 420,
                                    "max": 1523449, "mean": 216, "n": 7}}}],
   "ratios": [{"variant": "onetoone", "baseline": "chan", "phase": "mid", "metric": "p50", "ratio": 0.85},
              {"variant": "onetoone", "baseline": "chan", "phase": "mid", "metric": "p999", "ratio": 0.17}]}
]}`

func TestJSONShape(t *testing.T) {
	var r Report
	dec := json.NewDecoder(strings.NewReader(jsonShapeExample))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&r), "every field of the documented shape has a place in Report")
	require.Len(t, r.Workloads, 2)
	require.Equal(t, 18.9, r.Workloads[0].Variants[0].Phases["mid"]["median"])
	require.Equal(t, 0.17, r.Workloads[1].Ratios[1].Ratio)

	var buf bytes.Buffer
	require.NoError(t, writeJSON(&buf, r))
	// Same document, field for field, after a round trip.
	var want, got any
	require.NoError(t, json.Unmarshal([]byte(jsonShapeExample), &want))
	require.NoError(t, json.Unmarshal(buf.Bytes(), &got))
	require.Equal(t, want, got)
}

func TestBuildReportThroughput(t *testing.T) {
	reps := throughputReps("chan", phaseMid, 20.0, "onetoone-write", phaseMid, 50.0, "chan", phaseMid, 22.0,
		"onetoone-write", phaseFar, 15.0, "batch16", phaseMixed, 99.0)
	wr := buildReport(findWorkload("w1"), []string{"chan", "onetoone-write", "batch16"}, reps)
	require.Equal(t, "w1", wr.Name)
	require.Equal(t, "Mmsg/s", wr.Unit)
	require.Equal(t, []string{"chan", "onetoone-write", "batch16"}, []string{wr.Variants[0].Name, wr.Variants[1].Name, wr.Variants[2].Name})
	require.Equal(t, 21.0, wr.Variants[0].Phases[phaseMid][metricMedian])
	require.Equal(t, []Ratio{{Variant: "onetoone-write", Baseline: "chan", Phase: phaseMid, Metric: metricMedian, Ratio: 50.0 / 21}}, wr.Ratios)

	var buf bytes.Buffer
	require.NoError(t, writeTable(&buf, wr, "W1"))
	out := buf.String()
	require.Contains(t, out, "21.0 [20.0..22.0] n=2")
	require.Contains(t, out, "2.38x")
	require.Contains(t, out, "mixed")

	buf.Reset()
	require.NoError(t, writeJSON(&buf, Report{Workloads: []WorkloadReport{wr}}))
	require.Contains(t, buf.String(), `"ratios"`)
}

func TestBuildReportLatencyNoRatiosIsEmptyList(t *testing.T) {
	m := map[string]float64{metricP50: 1, metricP90: 1, metricP99: 1, metricP999: 1, metricMax: 1, metricMean: 1}
	reps := []repetition{{Variant: "chan", Phase: phaseMid, Latency: m}, {Variant: "onetoone", Phase: phaseFar, Latency: m}}
	wr := buildReport(findWorkload("w3"), []string{"chan", "onetoone"}, reps)
	require.Equal(t, "ns", wr.Unit)
	require.NotNil(t, wr.Ratios)
	require.Empty(t, wr.Ratios, "no phase in common")
	var buf bytes.Buffer
	require.NoError(t, writeJSON(&buf, Report{Workloads: []WorkloadReport{wr}}))
	require.Contains(t, buf.String(), `"ratios": []`)
	buf.Reset()
	require.NoError(t, writeTable(&buf, wr, "W3"))
	require.Contains(t, buf.String(), "phase far")
}

func TestCPUInfo(t *testing.T) {
	cpuinfo := "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 9B45\nflags\t\t: fpu hypervisor\n\nprocessor\t: 1\nmodel name\t: other\n"
	info := cpuInfo(strings.NewReader(cpuinfo))
	require.Equal(t, "AMD EPYC 9B45", info["model name"])
	require.Equal(t, "AuthenticAMD", info["vendor_id"])
	require.Equal(t, "fpu hypervisor", info["flags"])
	require.Empty(t, cpuInfo(strings.NewReader("processor\t: 0\n"))["model name"])
	h := Host{CPU: "X", Vendor: "V", CPUs: 2, Hypervisor: "KVMKVMKVM", PrefetchW: true}
	require.Equal(t, "X (V, 2 vCPUs, hypervisor KVMKVMKVM; PREFETCHW, no CLDEMOTE)", h.String())
	here := thisHost()
	require.NotEmpty(t, here.CPU)
	require.NotEmpty(t, here.Hypervisor)
	t.Log(here)
}

// Each W1 figure is also a ratio to its C reference in the same phase:
// batch16 to cring-batch16, the others to cring-write; a reference is not
// compared with itself, and a phase the reference lacks yields nothing.
func TestBuildReportLimits(t *testing.T) {
	reps := throughputReps("chan", phaseMid, 20.0, "batch16", phaseMid, 100.0, "batch16", phaseFar, 30.0,
		"cring-write", phaseMid, 200.0, "cring-batch16", phaseMid, 400.0)
	wr := buildReport(findWorkload("w1"), []string{"chan", "batch16", "cring-write", "cring-batch16"}, reps)
	require.ElementsMatch(t, []Ratio{
		{Variant: "chan", Baseline: "cring-write", Phase: phaseMid, Metric: metricMedian, Ratio: 0.1},
		{Variant: "batch16", Baseline: "cring-batch16", Phase: phaseMid, Metric: metricMedian, Ratio: 0.25},
	}, wr.Limits)
	var buf bytes.Buffer
	require.NoError(t, writeTable(&buf, wr, "W1"))
	require.Contains(t, buf.String(), "x C")
	require.Contains(t, buf.String(), "0.25x")

	wr = buildReport(findWorkload("w1"), []string{"chan", "batch16"}, reps)
	require.Empty(t, wr.Limits, "no reference in the run")
	buf.Reset()
	require.NoError(t, writeJSON(&buf, Report{Workloads: []WorkloadReport{wr}}))
	require.NotContains(t, buf.String(), "limits")
}
