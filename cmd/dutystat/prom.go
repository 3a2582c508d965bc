package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/dutyrt/duty/counters"
)

// The Prometheus exporter (-serve ADDR): every scrape of /metrics samples
// the directory, as one dutystat frame without rates (Prometheus computes
// them), and turns it into metrics with stable names:
//
//	duty_<type>_total                 a counter of kind counter (duty_delivered_total, duty_duty_cycles_total)
//	duty_<type>                       a gauge (duty_mailbox_depth, duty_longest_cycle_ns)
//	duty_<type>_timestamp_seconds     a timestamp (duty_heartbeat_timestamp_seconds)
//	duty_file_up                      1 for a file read without error, 0 otherwise
//	duty_file_heartbeat_age_seconds   the owner heartbeat's age
//	duty_histogram                    a latency histogram's quantiles, _count and _sum (histogram files)
//	duty_journal_up                   1 for a journal whose files were read without error, 0 otherwise
//	duty_journal_segments             a journal's segment files
//	duty_journal_committed_bytes      its committed position (a byte count of the log: only grows)
//	duty_journal_flush_lag_bytes      bytes committed and not yet flushed (durable)
//	duty_journal_readers              live registered readers, every process (the journal's reader registry)
//	duty_journal_indexed_records      records indexed per stream (label stream)
//
// Journal metrics carry the label journal (its directory relative to the
// scraped one, "." for the directory itself) and come from the writer's
// status file, so a journal whose writer has not published one yet has
// only duty_journal_up and duty_journal_segments.
//
// <type> is counters.TypeName with '-' and ':' as '_' (user:3 becomes
// user_3). Labels: file (the file's name), process (its owner's pid), role
// (the counter label after its "<type>: " prefix, by duty's convention the
// agent, mailbox or runner), label (the whole counter label).

// collector is a prometheus.Collector over a directory.
type collector struct {
	dir string
	e   env
	log *slog.Logger
}

var (
	fileUpDesc = prometheus.NewDesc("duty_file_up",
		"1 if the duty file was read without error, 0 otherwise.", []string{"file", "kind", "process"}, nil)
	fileAgeDesc = prometheus.NewDesc("duty_file_heartbeat_age_seconds",
		"Age of the owner heartbeat of the duty file.", []string{"file", "kind", "process"}, nil)

	journalUpDesc = prometheus.NewDesc("duty_journal_up",
		"1 if the journal's files were read without error, 0 otherwise.", []string{"journal"}, nil)
	journalSegmentsDesc = prometheus.NewDesc("duty_journal_segments",
		"Segment files of the journal.", []string{"journal"}, nil)
	journalCommittedDesc = prometheus.NewDesc("duty_journal_committed_bytes",
		"The journal's committed position: bytes of log written and committed.", []string{"journal"}, nil)
	journalLagDesc = prometheus.NewDesc("duty_journal_flush_lag_bytes",
		"Bytes committed to the journal and not yet flushed.", []string{"journal"}, nil)
	journalReadersDesc = prometheus.NewDesc("duty_journal_readers",
		"Live readers registered in the journal's reader registry, in every process.", []string{"journal"}, nil)
	journalIndexedDesc = prometheus.NewDesc("duty_journal_indexed_records",
		"Records of a stream in the journal's index.", []string{"journal", "stream"}, nil)
)

// journalMetrics sends the metrics of one journal.
func journalMetrics(ch chan<- prometheus.Metric, j journalSample) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, append([]string{j.Name}, labels...)...)
	}
	up := 1.0
	if j.Error != "" {
		up = 0
	}
	gauge(journalUpDesc, up)
	gauge(journalSegmentsDesc, float64(j.Segments))
	if j.Committed != nil {
		ch <- prometheus.MustNewConstMetric(journalCommittedDesc, prometheus.CounterValue, float64(*j.Committed), j.Name)
	}
	if j.FlushLag != nil {
		gauge(journalLagDesc, float64(*j.FlushLag))
	}
	if j.Readers != nil {
		gauge(journalReadersDesc, float64(*j.Readers))
	}
	for _, st := range j.Streams {
		gauge(journalIndexedDesc, float64(st.Indexed), strconv.FormatUint(uint64(st.ID), 10))
	}
}

// Describe sends nothing: the metrics depend on the files found at each
// scrape (an unchecked collector).
func (c *collector) Describe(chan<- *prometheus.Desc) {}

// Collect samples the directory and sends one metric per counter, file
// and histogram quantile set.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	f, err := sample(c.dir, c.e, nil, 0)
	if err != nil {
		c.log.Error("dutystat: scrape", "dir", c.dir, "err", err)
		return
	}
	seen := map[string]bool{}
	for _, s := range f.Files {
		process := ""
		if s.OwnerPID != 0 {
			process = strconv.Itoa(s.OwnerPID)
		}
		up := 1.0
		if s.Error != "" {
			up = 0
		}
		ch <- prometheus.MustNewConstMetric(fileUpDesc, prometheus.GaugeValue, up, s.Name, s.Kind, process)
		if s.HeartbeatAgeMs != nil {
			ch <- prometheus.MustNewConstMetric(fileAgeDesc, prometheus.GaugeValue, float64(*s.HeartbeatAgeMs)/1000, s.Name, s.Kind, process)
		}
		for _, ct := range s.Counters {
			m, key := counterMetric(s.Name, process, ct)
			if m == nil || seen[key] {
				continue // two counters of one type and label in one file: the first
			}
			seen[key] = true
			ch <- m
		}
		for _, h := range s.Histograms {
			if m := histogramMetric(s.Name, process, h); m != nil {
				ch <- m
			}
		}
	}
	for _, j := range f.Journals {
		journalMetrics(ch, j)
	}
}

// metricName is the Prometheus name of a counter type.
func metricName(typ string) string {
	var b strings.Builder
	b.WriteString("duty_")
	for _, r := range typ {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// counterMetric turns one counter into a metric, and returns a key that
// is the same for two counters Prometheus could not tell apart.
func counterMetric(file, process string, c counterSample) (prometheus.Metric, string) {
	name := metricName(c.Type)
	role := c.Label
	if i := strings.Index(role, ": "); i >= 0 {
		role = role[i+2:]
	}
	var vt prometheus.ValueType
	value := float64(c.Value)
	help := "duty counter " + c.Type + " (" + c.Kind + ")."
	switch c.Kind {
	case counters.KindGauge.String():
		vt = prometheus.GaugeValue
	case counters.KindTimestamp.String():
		vt, name, value = prometheus.GaugeValue, name+"_timestamp_seconds", value/1000
	default:
		vt, name = prometheus.CounterValue, name+"_total"
	}
	desc := prometheus.NewDesc(name, help, []string{"file", "process", "role", "label"}, nil)
	m, err := prometheus.NewConstMetric(desc, vt, value, file, process, role, c.Label)
	if err != nil {
		return nil, ""
	}
	return m, name + "\x00" + file + "\x00" + c.Label
}

var histogramDesc = prometheus.NewDesc("duty_histogram",
	"A duty latency histogram (its label says the unit): quantiles of all values recorded.",
	[]string{"file", "process", "histogram"}, nil)

// histogramMetric turns a histogram into a summary.
func histogramMetric(file, process string, h histogramSample) prometheus.Metric {
	q := map[float64]float64{}
	for _, p := range h.Percentiles {
		q[p.Quantile/100] = float64(p.Value)
	}
	q[1] = float64(h.Max)
	m, err := prometheus.NewConstSummary(histogramDesc, uint64(max(h.Count, 0)), h.Mean*float64(h.Count), q, file, process, h.Label)
	if err != nil {
		return nil
	}
	return m
}

// serve runs the exporter on addr until ctx ends. ready, if not nil, gets
// the address it listens on.
func serve(ctx context.Context, addr, dir string, e env, stderr io.Writer, ready func(net.Addr)) error {
	reg := prometheus.NewRegistry()
	log := slog.New(slog.NewTextHandler(stderr, nil))
	reg.MustRegister(&collector{dir: dir, e: e, log: log})
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", addr, err)
	}
	if ready != nil {
		ready(ln.Addr())
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err = srv.Shutdown(sctx)
		<-done
		return err
	case err := <-done:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	}
}
