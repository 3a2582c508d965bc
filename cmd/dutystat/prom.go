package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"

	"github.com/dutyrt/duty/counters"
	"github.com/dutyrt/duty/internal/countertype"
)

// The Prometheus exporter (-serve ADDR): every scrape of /metrics samples
// the directory, as one dutystat frame without rates (Prometheus computes
// them), and turns it into metrics named by Prometheus's conventions: a
// subsystem per kind of thing (duty_mailbox_, duty_runner_,
// duty_natsbridge_, duty_journal_, duty_latency_, ...), base units
// (seconds, bytes), _total on counters, and the owner process as an info
// metric (duty_file_owner_info) rather than a label on every series, so
// that a restart does not start new series. docs/operations.md lists every
// name; metricNames (below) is that list, which the tests hold the docs and
// every scrape to.

// collector is a prometheus.Collector over a directory.
type collector struct {
	dir string
	e   env
	log *slog.Logger
}

// counterDef says how a duty counter type is exported: its metric name,
// its help text, the label its counter label's subject goes in, and the
// factor from its value to the metric's unit.
type counterDef struct {
	name, help, subject string
	scale               float64
}

// The labels of a known counter's metric: the file and the subject of the
// counter's label (what comes after "<type>: ").
var counterDefs = map[int32]counterDef{
	countertype.Delivered:          {"duty_mailbox_delivered_messages_total", "Messages the mailbox delivered to its consumer.", "mailbox", 1},
	countertype.ConsumedBytes:      {"duty_mailbox_consumed_bytes_total", "Bytes the consumer released from the mailbox's ring: records with their headers and padding.", "mailbox", 1},
	countertype.RefusedClosed:      {"duty_mailbox_refused_closed_total", "Sends refused because the mailbox was closed (each sender got an error).", "mailbox", 1},
	countertype.BackPressureEvents: {"duty_mailbox_back_pressure_total", "Offers refused because the mailbox's ring was full (back-pressure: the sender got an error and may retry).", "mailbox", 1},
	countertype.UnblockedClaims:    {"duty_mailbox_unblocked_claims_total", "Claims of dead producers turned into padding by the consumer: each a message lost.", "mailbox", 1},
	countertype.CorruptRecords:     {"duty_mailbox_corrupt_records_total", "Records the consumer dropped for invalid framing or checksum: each a message lost.", "mailbox", 1},
	countertype.Discarded:          {"duty_mailbox_discarded_messages_total", "Messages consumed without delivery after Close(Discard).", "mailbox", 1},
	countertype.MailboxDepth:       {"duty_mailbox_depth_bytes", "Bytes waiting in the mailbox when its consumer last published its statistics.", "mailbox", 1},
	countertype.MaxDepth:           {"duty_mailbox_max_depth_bytes", "The largest backlog, in bytes, the mailbox's consumer has found.", "mailbox", 1},

	countertype.DutyCycles:     {"duty_runner_cycles_total", "Duty cycles the runner ran.", "runner", 1},
	countertype.IdleCycles:     {"duty_runner_idle_cycles_total", "Duty cycles of the runner that did no work (its agents' DoWork returned 0).", "runner", 1},
	countertype.TotalWork:      {"duty_runner_work_total", "Sum of the work counts its agents' DoWork returned: items of work done.", "runner", 1},
	countertype.Errors:         {"duty_runner_errors_total", "Errors its agents reported.", "runner", 1},
	countertype.LongestCycleNs: {"duty_runner_longest_cycle_seconds", "The runner's longest duty cycle since it started.", "runner", 1e-9},
	countertype.Restarts:       {"duty_agent_restarts_total", "Restarts of a group member's agent by its restart policy.", "agent", 1},

	countertype.SubscriberPosition: {"duty_publication_subscriber_position_bytes", "A subscriber's position in a publication's log.", "subscriber", 1},

	countertype.Heartbeat: {"duty_heartbeat_timestamp_seconds", "A participant's last sign of life, in seconds since the Unix epoch (its age: time() - this).", "role", 1e-3},
}

// bridgeDefs are the natsbridge counters (countertype.BridgeEvents,
// labelled "natsbridge-<event>: <bridge> <in|out>"), by event.
var bridgeDefs = map[string]counterDef{
	"published":      {"duty_natsbridge_published_batches_total", "Batches the bridge published: handed to the client (core NATS) or acknowledged by the stream (JetStream).", "", 1},
	"batched":        {"duty_natsbridge_batched_messages_total", "Messages the outbound bridge packed into batches.", "", 1},
	"delivered":      {"duty_natsbridge_delivered_messages_total", "Messages the inbound bridge sent into its local mailbox.", "", 1},
	"dropped":        {"duty_natsbridge_dropped_messages_total", "Messages lost, counted: a batch that found the local mailbox full (core NATS), or a message the other end can never carry.", "", 1},
	"redelivered":    {"duty_natsbridge_redelivered_batches_total", "JetStream batches received again after delivery (their acknowledgement was lost), skipped.", "", 1},
	"reconnects":     {"duty_natsbridge_reconnects_total", "Reconnects of the bridge's NATS client.", "", 1},
	"rejected":       {"duty_natsbridge_rejected_payloads_total", "Payloads on the bridge's subject that were not valid frames, dropped whole.", "", 1},
	"back-pressured": {"duty_natsbridge_back_pressured_total", "Times the bridge found the client's buffer or its local mailbox full.", "", 1},
	"republished":    {"duty_natsbridge_republished_batches_total", "JetStream batches published again after a failed or unacknowledged publish.", "", 1},
	"lost-batches":   {"duty_natsbridge_lost_batches_total", "Batches in which the inbound bridge's lost messages were missing (sequence gaps).", "", 1},
	"duplicates":     {"duty_natsbridge_duplicate_batches_total", "JetStream batches stored twice and recognised by their sequence, skipped.", "", 1},
	"lost-messages":  {"duty_natsbridge_lost_messages_total", "Messages lost, counted, that are not in dropped: sequence gaps inbound; unconfirmed or unpublished at close outbound.", "", 1},
	"client-dropped": {"duty_natsbridge_client_dropped_frames_total", "Frames the inbound bridge's NATS client dropped as a slow consumer.", "", 1},
}

// The metrics of counters of other types: an application's own
// (counters.UserType) and foreign type ids, by kind.
var (
	appCounterDesc = prometheus.NewDesc("duty_app_total",
		"An application's counter (counters.UserType of kind counter, or a foreign type id): its value; type is counters.TypeName.",
		[]string{"file", "type", "label"}, nil)
	appGaugeDesc = prometheus.NewDesc("duty_app_value",
		"An application's gauge (counters.UserType of kind gauge): its value; type is counters.TypeName.",
		[]string{"file", "type", "label"}, nil)
	appTimestampDesc = prometheus.NewDesc("duty_app_timestamp_seconds",
		"An application's timestamp counter (counters.UserType of kind timestamp), in seconds since the Unix epoch.",
		[]string{"file", "type", "label"}, nil)
	bridgeOtherDesc = prometheus.NewDesc("duty_natsbridge_other_events_total",
		"A bridge's events of a kind this dutystat does not know (the event label names it).",
		[]string{"file", "bridge", "direction", "event"}, nil)
)

var (
	fileUpDesc = prometheus.NewDesc("duty_file_up",
		"1 if the duty file was read without error, 0 otherwise.", []string{"file", "kind"}, nil)
	fileAgeDesc = prometheus.NewDesc("duty_file_heartbeat_age_seconds",
		"Age of the owner heartbeat of the duty file.", []string{"file", "kind"}, nil)
	fileOwnerDesc = prometheus.NewDesc("duty_file_owner_info",
		"The process that owns the duty file (always 1; join on file for its pid and state).", []string{"file", "kind", "pid", "state"}, nil)
	mailboxStrandedDesc = prometheus.NewDesc("duty_mailbox_stranded_messages",
		"Messages queued in a mailbox file whose consumer's process is proved dead: accepted, never to be delivered (0 while it lives).", []string{"file"}, nil)

	journalUpDesc = prometheus.NewDesc("duty_journal_up",
		"1 if the journal's files were read without error, 0 otherwise.", []string{"journal"}, nil)
	journalSegmentsDesc = prometheus.NewDesc("duty_journal_segments",
		"Segment files of the journal.", []string{"journal"}, nil)
	journalCommittedDesc = prometheus.NewDesc("duty_journal_committed_bytes_total",
		"The journal's committed position: bytes of log written and committed.", []string{"journal"}, nil)
	journalLagDesc = prometheus.NewDesc("duty_journal_flush_lag_bytes",
		"Bytes committed to the journal and not yet flushed (not yet durable).", []string{"journal"}, nil)
	journalReadersDesc = prometheus.NewDesc("duty_journal_readers",
		"Live readers registered in the journal's reader registry, in every process.", []string{"journal"}, nil)
	journalIndexedDesc = prometheus.NewDesc("duty_journal_indexed_records",
		"Records of a stream in the journal's index.", []string{"journal", "stream"}, nil)

	latencyDesc = prometheus.NewDesc("duty_latency_seconds",
		"A duty latency histogram (a histograms file's histogram whose label names a time unit): every value recorded since it was created.",
		[]string{"file", "histogram"}, nil)
	latencySummaryDesc = prometheus.NewDesc("duty_latency_percentiles_seconds",
		"The same histogram's exact HdrHistogram percentiles (quantile 1 is the maximum).",
		[]string{"file", "histogram"}, nil)
	valuesDesc = prometheus.NewDesc("duty_recorded_values",
		"A duty histogram whose label names no time unit, in its own unit: every value recorded since it was created.",
		[]string{"file", "histogram"}, nil)
	clampedDesc = prometheus.NewDesc("duty_histogram_clamped_total",
		"Values recorded at a bound of the histogram's range because they were outside it.",
		[]string{"file", "histogram"}, nil)
)

// metricNames are the names of every metric family the exporter can
// serve, each with its type (docs/operations.md lists them all).
func metricNames() map[string]dto.MetricType {
	names := map[string]dto.MetricType{
		"duty_app_total":                     dto.MetricType_COUNTER,
		"duty_app_value":                     dto.MetricType_GAUGE,
		"duty_app_timestamp_seconds":         dto.MetricType_GAUGE,
		"duty_natsbridge_other_events_total": dto.MetricType_COUNTER,
		"duty_file_up":                       dto.MetricType_GAUGE,
		"duty_file_heartbeat_age_seconds":    dto.MetricType_GAUGE,
		"duty_file_owner_info":               dto.MetricType_GAUGE,
		"duty_mailbox_stranded_messages":     dto.MetricType_GAUGE,
		"duty_journal_up":                    dto.MetricType_GAUGE,
		"duty_journal_segments":              dto.MetricType_GAUGE,
		"duty_journal_committed_bytes_total": dto.MetricType_COUNTER,
		"duty_journal_flush_lag_bytes":       dto.MetricType_GAUGE,
		"duty_journal_readers":               dto.MetricType_GAUGE,
		"duty_journal_indexed_records":       dto.MetricType_GAUGE,
		"duty_latency_seconds":               dto.MetricType_HISTOGRAM,
		"duty_latency_percentiles_seconds":   dto.MetricType_SUMMARY,
		"duty_recorded_values":               dto.MetricType_HISTOGRAM,
		"duty_histogram_clamped_total":       dto.MetricType_COUNTER,
	}
	for id, d := range counterDefs {
		names[d.name] = valueType(exportKind(id))
	}
	for _, d := range bridgeDefs {
		names[d.name] = dto.MetricType_COUNTER
	}
	return names
}

// exportKind is the kind a counter of typeID is exported as: KindOf's,
// except for a position in a log, which is a gauge (a new log starts
// them again, and a position is no count of events).
func exportKind(typeID int32) counters.Kind {
	switch typeID {
	case countertype.SubscriberPosition:
		return counters.KindGauge
	}
	return counters.KindOf(typeID)
}

func valueType(k counters.Kind) dto.MetricType {
	if k == counters.KindCounter {
		return dto.MetricType_COUNTER
	}
	return dto.MetricType_GAUGE
}

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
// and histogram.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	f, err := sample(c.dir, c.e, nil, 0)
	if err != nil {
		c.log.Error("dutystat: scrape", "dir", c.dir, "err", err)
		return
	}
	seen := map[string]bool{}
	for _, s := range f.Files {
		kind := s.Kind
		up := 1.0
		if s.Error != "" {
			up = 0
		}
		ch <- prometheus.MustNewConstMetric(fileUpDesc, prometheus.GaugeValue, up, s.Name, kind)
		if s.OwnerPID != 0 {
			ch <- prometheus.MustNewConstMetric(fileOwnerDesc, prometheus.GaugeValue, 1, s.Name, kind, strconv.Itoa(s.OwnerPID), s.Owner)
		}
		if s.HeartbeatAgeMs != nil {
			ch <- prometheus.MustNewConstMetric(fileAgeDesc, prometheus.GaugeValue, float64(*s.HeartbeatAgeMs)/1000, s.Name, kind)
		}
		if s.Mailbox != nil {
			ch <- prometheus.MustNewConstMetric(mailboxStrandedDesc, prometheus.GaugeValue, float64(s.Mailbox.Stranded), s.Name)
		}
		for _, ct := range s.Counters {
			m, key := counterMetric(s.Name, ct)
			if m == nil || seen[key] {
				continue // two counters of one type and subject in one file: the first
			}
			seen[key] = true
			ch <- m
		}
		for _, h := range s.Histograms {
			histogramMetrics(ch, s.Name, h, c.log)
		}
	}
	for _, j := range f.Journals {
		journalMetrics(ch, j)
	}
}

// subject is what a counter label is about, by duty's convention
// "<type>: <subject>": the mailbox, runner, bridge, ... (the whole label
// without that prefix). A heartbeat's " pid=N" is dropped: the process is
// in duty_file_owner_info, and a label that changes at every restart
// would start new series.
func subject(label string) string {
	if i := strings.Index(label, ": "); i >= 0 {
		label = label[i+2:]
	}
	if i := strings.LastIndex(label, " pid="); i >= 0 {
		if _, err := strconv.Atoi(label[i+5:]); err == nil {
			label = label[:i]
		}
	}
	return label
}

// counterMetric turns one counter into a metric, and returns a key that
// is the same for two counters Prometheus could not tell apart.
func counterMetric(file string, c counterSample) (prometheus.Metric, string) {
	kind := exportKind(c.TypeID)
	vt := prometheus.CounterValue
	if kind != counters.KindCounter {
		vt = prometheus.GaugeValue
	}
	var (
		desc   *prometheus.Desc
		labels []string
		value  = float64(c.Value)
	)
	if d, ok := counterDefs[c.TypeID]; ok {
		desc = prometheus.NewDesc(d.name, d.help, []string{"file", d.subject}, nil)
		labels = []string{file, subject(c.Label)}
		value *= d.scale
	} else if c.TypeID == countertype.BridgeEvents {
		prefix, rest, _ := strings.Cut(c.Label, ": ")
		event := strings.TrimPrefix(prefix, "natsbridge-")
		bridge, dir := rest, ""
		if i := strings.LastIndexByte(rest, ' '); i >= 0 {
			bridge, dir = rest[:i], rest[i+1:]
		}
		if d, ok := bridgeDefs[event]; ok {
			desc = prometheus.NewDesc(d.name, d.help, []string{"file", "bridge", "direction"}, nil)
			labels = []string{file, bridge, dir}
		} else {
			desc, labels = bridgeOtherDesc, []string{file, bridge, dir, event}
		}
	} else {
		switch kind {
		case counters.KindGauge:
			desc = appGaugeDesc
		case counters.KindTimestamp:
			desc, value = appTimestampDesc, value/1000
		default:
			desc = appCounterDesc
		}
		labels = []string{file, c.Type, c.Label}
	}
	m, err := prometheus.NewConstMetric(desc, vt, value, labels...)
	if err != nil {
		return nil, ""
	}
	return m, desc.String() + "\x00" + strings.Join(labels, "\x00")
}

// summaryQuantiles are the quantiles of duty_latency_percentiles_seconds, each
// with the percentile dutystat reads from the histogram: written out, so
// that the quantile label is "0.999", not 99.9/100 in floating point.
var summaryQuantiles = []struct{ quantile, percentile float64 }{
	{0.5, 50}, {0.9, 90}, {0.99, 99}, {0.999, 99.9}, {0.9999, 99.99},
}

// latencyBuckets are the classic bucket bounds of duty_latency_seconds,
// for servers without native histograms: 1-2.5-5 steps from 1 µs to 10 s.
var latencyBuckets = []float64{
	1e-6, 2.5e-6, 5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4,
	1e-3, 2.5e-3, 5e-3, 1e-2, 2.5e-2, 5e-2, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
}

// nativeSchema is the native histograms' schema: 2^(2^-3) (about 9 %)
// between bucket bounds, coarser than the HdrHistogram's three significant
// figures, so that each of its buckets falls in one native bucket.
const nativeSchema = 3

// unitSeconds returns the histogram's name without its unit and the
// unit's length in seconds, from a label ending in a time unit ("tick-to-trade ns"), or 0 for
// a label that names none.
func unitSeconds(label string) (string, float64) {
	i := strings.LastIndexByte(label, ' ')
	if i < 0 {
		return label, 0
	}
	scale := map[string]float64{"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1}[label[i+1:]]
	if scale == 0 {
		return label, 0
	}
	return label[:i], scale
}

// histogramMetrics sends a histogram as a Prometheus histogram, native
// (schema nativeSchema) and classic, of every value recorded since it was
// created: duty_latency_seconds for a label that names a time unit, in
// seconds, with its exact percentiles as duty_latency_percentiles_seconds;
// duty_recorded_values for any other, in its own unit. The counts come
// from the HdrHistogram buckets, each at its highest equivalent value.
func histogramMetrics(ch chan<- prometheus.Metric, file string, h histogramSample, log *slog.Logger) {
	name, scale := unitSeconds(h.Label)
	desc := latencyDesc
	if scale == 0 {
		desc, scale, name = valuesDesc, 1, h.Label
	}
	ch <- prometheus.MustNewConstMetric(clampedDesc, prometheus.CounterValue, float64(h.Clamped), file, name)
	count := uint64(max(h.Count, 0))
	sum := h.Mean * float64(h.Count) * scale
	native := map[int]int64{}
	var zero uint64
	classic := make(map[float64]uint64, len(latencyBuckets))
	for _, b := range h.buckets {
		v := float64(b.value) * scale
		if v <= 0 {
			zero += uint64(b.count)
		} else {
			native[nativeIndex(v)] += b.count
		}
		for _, le := range latencyBuckets {
			if v <= le {
				classic[le] += uint64(b.count)
			}
		}
	}
	created := time.UnixMilli(h.startMillis)
	nm, err := prometheus.NewConstNativeHistogram(desc, count, sum, native, nil, zero, nativeSchema,
		prometheus.DefNativeHistogramZeroThreshold, created, file, name)
	if err != nil {
		log.Error("dutystat: histogram", "file", file, "histogram", h.Label, "err", err)
		return
	}
	ch <- &withClassicBuckets{Metric: nm, buckets: classic}
	if desc != latencyDesc {
		return
	}
	q := make(map[float64]float64, len(summaryQuantiles)+1)
	for _, sq := range summaryQuantiles {
		q[sq.quantile] = float64(h.valueAt(sq.percentile)) * scale
	}
	q[1] = float64(h.Max) * scale
	if m, err := prometheus.NewConstSummary(latencySummaryDesc, count, sum, q, file, name); err == nil {
		ch <- m
	}
}

// nativeIndex is the index of the native histogram bucket of schema
// nativeSchema that holds v > 0: bucket i holds (2^((i-1)/8), 2^(i/8)].
// As Prometheus computes it: from v's fraction and exponent (math.Frexp),
// so that a power of two falls in the bucket it bounds.
func nativeIndex(v float64) int {
	frac, exp := math.Frexp(v) // v = frac × 2^exp, frac in [0.5, 1)
	return sort.SearchFloat64s(nativeBounds[:], frac) + (exp-1)*len(nativeBounds)
}

// nativeBounds are the upper bounds of the buckets of schema nativeSchema
// within [0.5, 1): 2^(i/8) / 2.
var nativeBounds = func() (b [1 << nativeSchema]float64) {
	for i := range b {
		b[i] = math.Ldexp(math.Exp2(float64(i)/float64(len(b))), -1)
	}
	return b
}()

// withClassicBuckets is a native histogram with classic buckets as well,
// for servers that scrape without native histograms (and the text format,
// which carries only the classic ones).
type withClassicBuckets struct {
	prometheus.Metric
	buckets map[float64]uint64
}

func (m *withClassicBuckets) Write(out *dto.Metric) error {
	if err := m.Metric.Write(out); err != nil {
		return err
	}
	for _, le := range latencyBuckets {
		out.Histogram.Bucket = append(out.Histogram.Bucket, &dto.Bucket{UpperBound: new(le), CumulativeCount: new(m.buckets[le])})
	}
	return nil
}

// histogramBucket is a non-empty HdrHistogram bucket: its highest
// equivalent value and its count.
type histogramBucket struct{ value, count int64 }

// serve runs the exporter (/metrics) and the live page (/, page.go) on
// addr until ctx ends. ready, if not nil, gets
// the address it listens on.
func serve(ctx context.Context, addr, dir string, e env, stderr io.Writer, ready func(net.Addr)) error {
	reg := prometheus.NewRegistry()
	log := slog.New(slog.NewTextHandler(stderr, nil))
	reg.MustRegister(&collector{dir: dir, e: e, log: log})
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	(&pageServer{dir: dir, e: e, log: log}).register(mux)
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
