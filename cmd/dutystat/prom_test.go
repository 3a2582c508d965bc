package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/histogram"
	"github.com/dutyrt/duty/ipc"
)

// scrape starts the exporter on a loopback port over dir, scrapes it once
// and returns the parsed families; the exporter stops with the test.
func scrape(t *testing.T, dir string) map[string]*dto.MetricFamily {
	t.Helper()
	fams, _ := scrapeText(t, dir)
	return fams
}

// scrapeText is scrape with the text scraped as well.
func scrapeText(t *testing.T, dir string) (map[string]*dto.MetricFamily, string) {
	t.Helper()
	a := startServer(t, dir)
	resp, err := http.Get("http://" + a + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var out bytes.Buffer
	_, err = io.Copy(&out, resp.Body)
	require.NoError(t, err)
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(out.Bytes()))
	require.NoError(t, err, out.String())
	return fams, out.String()
}

// startServer starts dutystat's server (-serve) on a loopback port over
// dir and returns its address; it stops with the test.
func startServer(t *testing.T, dir string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, "127.0.0.1:0", dir, defaultEnv(), io.Discard, func(a net.Addr) { addr <- a })
	}()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	var a net.Addr
	select {
	case a = <-addr:
	case err := <-done:
		t.Fatal(err)
	case <-time.After(10 * time.Second):
		t.Fatal("the exporter did not listen")
	}
	return a.String()
}

// value returns the value of the metric of family name whose labels
// include want, and whether there is one.
func value(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	f, ok := fams[name]
	if !ok {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Summary != nil:
			return float64(m.Summary.GetSampleCount()), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

// A real scrape of a directory: counters by kind, with stable names and
// labels, files with their status and owner, parsed with Prometheus's own
// parser.
func TestPrometheusScrape(t *testing.T) {
	fx := newFixture(t)
	fams, text := scrapeText(t, fx.dir)
	t.Log("\n" + text)
	for _, c := range []struct {
		name   string
		typ    dto.MetricType
		labels map[string]string
		value  float64
	}{
		{"duty_runner_cycles_total", dto.MetricType_COUNTER, map[string]string{"runner": "gateway"}, 1_000_000},
		{"duty_runner_work_total", dto.MetricType_COUNTER, map[string]string{"runner": "gateway"}, 250_000},
		{"duty_runner_errors_total", dto.MetricType_COUNTER, map[string]string{"runner": "gateway"}, 3},
		{"duty_runner_longest_cycle_seconds", dto.MetricType_GAUGE, map[string]string{"runner": "gateway"}, 48_123e-9},
		{"duty_app_value", dto.MetricType_GAUGE, map[string]string{"label": "app gauge", "type": "user:8"}, 40},
		{"duty_app_total", dto.MetricType_COUNTER, map[string]string{"label": "app counter", "type": "user:7"}, -17},
	} {
		require.Equal(t, c.typ, fams[c.name].GetType(), c.name)
		c.labels["file"] = "stats"
		v, ok := value(fams, c.name, c.labels)
		require.True(t, ok, c.name)
		require.InDelta(t, c.value, v, 1e-15, c.name)
	}
	hb, ok := value(fams, "duty_heartbeat_timestamp_seconds", map[string]string{"file": "stats", "role": "gateway"})
	require.True(t, ok)
	require.InDelta(t, float64(time.Now().Unix()), hb, 60)
	up, ok := value(fams, "duty_file_up", map[string]string{"file": "stats", "kind": "counters"})
	require.True(t, ok)
	require.Equal(t, 1.0, up)
	up, ok = value(fams, "duty_file_up", map[string]string{"file": "junk"})
	require.True(t, ok)
	require.Equal(t, 0.0, up, "a file that is not a duty file is reported, not fatal")
	_, ok = value(fams, "duty_file_heartbeat_age_seconds", map[string]string{"file": "orders", "kind": "ring"})
	require.True(t, ok)
	owner, ok := value(fams, "duty_file_owner_info", map[string]string{"file": "stats", "pid": strconv.Itoa(os.Getpid()), "state": "alive"})
	require.True(t, ok)
	require.Equal(t, 1.0, owner)
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				require.NotEqual(t, "process", l.GetName(), "%s: the process is duty_file_owner_info's, not a label of every series", name)
				if name != "duty_file_owner_info" {
					require.NotEqual(t, "pid", l.GetName(), name)
				}
			}
		}
	}
	checkScrape(t, fams, text)
}

// checkScrape holds a scrape to Prometheus's conventions (promlint finds
// nothing) and to dutystat's list of metrics: every family is in
// metricNames with its type, and docs/operations.md lists it.
func checkScrape(t *testing.T, fams map[string]*dto.MetricFamily, text string) {
	t.Helper()
	problems, err := promlint.New(strings.NewReader(text)).Lint()
	require.NoError(t, err)
	require.Empty(t, problems, "promlint")
	names := metricNames()
	documented := documentedMetrics(t)
	for name, f := range fams {
		typ, ok := names[name]
		require.True(t, ok, "%s is not in metricNames", name)
		require.Equal(t, typ, f.GetType(), name)
		require.Equal(t, strings.ToLower(typ.String()), documented[name], "%s: docs/operations.md's type", name)
		require.NotEmpty(t, f.GetHelp(), name)
	}
}

// documentedMetrics reads the metrics table of docs/operations.md: each
// row's metric name and its type.
func documentedMetrics(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile("../../docs/operations.md")
	require.NoError(t, err)
	out := map[string]string{}
	row := regexp.MustCompile("(?m)^\\| `(duty_[a-z0-9_]+)` \\| ([a-z]+) \\|")
	for _, m := range row.FindAllStringSubmatch(string(b), -1) {
		out[m[1]] = m[2]
	}
	return out
}

// docs/operations.md lists every metric the exporter can serve, with its
// type, and nothing else.
func TestEveryMetricDocumented(t *testing.T) {
	documented := documentedMetrics(t)
	for name, typ := range metricNames() {
		require.Equal(t, strings.ToLower(typ.String()), documented[name], "%s in docs/operations.md", name)
	}
	for name := range documented {
		_, ok := metricNames()[name]
		require.True(t, ok, "docs/operations.md lists %s, which the exporter never serves", name)
	}
}

// The exported summary's quantile labels are the decimal quantiles,
// exactly, and the latency histograms are Prometheus histograms in
// seconds, native (protobuf) and classic (text) alike.
func TestLatencyHistogramExport(t *testing.T) {
	dir := t.TempDir()
	cfg := histogram.Config{Lowest: 1, Highest: 10_000_000_000, SignificantFigures: 3}
	hf, err := ipc.CreateHistograms(dir, "latency", []ipc.HistogramSpec{{Label: "rtt ns", Config: cfg}, {Label: "sizes", Config: cfg}})
	require.NoError(t, err)
	t.Cleanup(func() { hf.Close() })
	rec := hf.Recorder(0)
	for v := int64(1); v <= 1000; v++ {
		rec.Record(v * 1000) // 1 µs .. 1 ms
	}
	hf.Recorder(1).Record(512)

	fams, text := scrapeText(t, dir)
	require.Contains(t, text, `duty_latency_percentiles_seconds{file="latency",histogram="rtt",quantile="0.999"} 0.000999`)
	require.NotContains(t, text, "0.9990000000000001")
	h := fams["duty_latency_seconds"]
	require.Equal(t, dto.MetricType_HISTOGRAM, h.GetType())
	hm := h.GetMetric()[0].GetHistogram()
	require.Equal(t, uint64(1000), hm.GetSampleCount())
	require.InDelta(t, 0.5005, hm.GetSampleSum(), 0.001) // mean 500.5 µs
	for _, b := range hm.GetBucket() {
		want := uint64(min(max(b.GetUpperBound()*1e6, 0), 1000)) // values ≤ le µs, within HdrHistogram's precision
		require.InDelta(t, float64(want), float64(b.GetCumulativeCount()), float64(want)/500+1, "le=%g", b.GetUpperBound())
	}
	v, ok := value(fams, "duty_recorded_values", map[string]string{"histogram": "sizes"})
	require.True(t, ok)
	require.Equal(t, 1.0, v)
	checkScrape(t, fams, text)

	// The native histogram: protobuf, as a Prometheus with native
	// histograms enabled asks for it.
	a := startServer(t, dir)
	req, err := http.NewRequest(http.MethodGet, "http://"+a+"/metrics", nil)
	require.NoError(t, err)
	req.Header.Set("Accept", `application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited`)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Contains(t, resp.Header.Get("Content-Type"), "application/vnd.google.protobuf")
	dec := expfmt.NewDecoder(resp.Body, expfmt.ResponseFormat(resp.Header))
	var native *dto.Histogram
	for {
		var mf dto.MetricFamily
		if err := dec.Decode(&mf); err != nil {
			require.ErrorIs(t, err, io.EOF)
			break
		}
		if mf.GetName() == "duty_latency_seconds" {
			native = mf.GetMetric()[0].GetHistogram()
		}
	}
	require.NotNil(t, native)
	require.Equal(t, int32(nativeSchema), native.GetSchema())
	var total int64
	var count int64
	idx := int32(0)
	for i, sp := range native.GetPositiveSpan() {
		idx += sp.GetOffset()
		if i == 0 {
			require.Equal(t, int32(nativeIndex(1e-6)), idx, "the first bucket holds 1 µs")
		}
		idx += int32(sp.GetLength())
	}
	for _, d := range native.GetPositiveDelta() {
		count += d
		total += count
	}
	require.Equal(t, int64(1000), total, "the native buckets hold every value")
	require.Equal(t, int32(nativeIndex(1e-3)), idx-1, "the last bucket holds 1 ms")
}

// nativeIndex puts each power of two in the bucket it bounds, as
// Prometheus does.
func TestNativeIndex(t *testing.T) {
	require.Equal(t, 0, nativeIndex(1))
	require.Equal(t, 8, nativeIndex(2))
	require.Equal(t, 9, nativeIndex(2.0001))
	require.Equal(t, -8, nativeIndex(0.5))
	require.Equal(t, 1, nativeIndex(1.05)) // (1, 2^(1/8) = 1.0905]
}
