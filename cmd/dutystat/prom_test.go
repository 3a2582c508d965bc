package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
)

// scrape starts the exporter on a loopback port over dir, scrapes it once
// and returns the parsed families; the exporter stops with the test.
func scrape(t *testing.T, dir string) map[string]*dto.MetricFamily {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan net.Addr, 1)
	done := make(chan error, 1)
	var out bytes.Buffer
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
	resp, err := http.Get("http://" + a.String() + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	_, err = io.Copy(&out, resp.Body)
	require.NoError(t, err)
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(&out)
	require.NoError(t, err, out.String())
	return fams
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
		}
	}
	return 0, false
}

// A real scrape of a directory: counters by kind, with stable names and
// labels, files with their status, parsed with Prometheus's own parser.
func TestPrometheusScrape(t *testing.T) {
	fx := newFixture(t)
	fams := scrape(t, fx.dir)
	pid := strconv.Itoa(os.Getpid())
	for _, c := range []struct {
		name  string
		typ   dto.MetricType
		role  string
		value float64
	}{
		{"duty_duty_cycles_total", dto.MetricType_COUNTER, "gateway", 1_000_000},
		{"duty_total_work_total", dto.MetricType_COUNTER, "gateway", 250_000},
		{"duty_errors_total", dto.MetricType_COUNTER, "gateway", 3},
		{"duty_longest_cycle_ns", dto.MetricType_GAUGE, "gateway", 48_123},
		{"duty_user_8", dto.MetricType_GAUGE, "app gauge", 40},
		{"duty_user_7_total", dto.MetricType_COUNTER, "app counter", -17},
	} {
		require.Equal(t, c.typ, fams[c.name].GetType(), c.name)
		v, ok := value(fams, c.name, map[string]string{"file": "stats", "role": c.role, "process": pid})
		require.True(t, ok, c.name)
		require.Equal(t, c.value, v, c.name)
	}
	hb, ok := value(fams, "duty_heartbeat_timestamp_seconds", map[string]string{"file": "stats", "label": "heartbeat: gateway"})
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
}
