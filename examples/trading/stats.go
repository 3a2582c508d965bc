package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/dutyrt/duty/counters"
	"github.com/dutyrt/duty/errlog"
	"github.com/dutyrt/duty/ipc"
	"github.com/dutyrt/duty/runner"
)

// statsCounters is how many counters the demo's counters file holds: ten
// for each of its mailboxes and five for each of its runners, with room to
// spare.
const statsCounters = 128

// statsFiles are the files through which the demo can be watched while it
// runs, in one directory: its counters file (every mailbox's and every
// runner's statistics) in either mode, beside the shared mailboxes with
// -ipc. dutystat, or its Prometheus exporter, pointed at the directory
// shows the pipeline live.
type statsFiles struct {
	dir      string
	ownDir   bool
	counters *ipc.CountersFile
	own      bool // the demo created counters (in-process mode); -ipc: the remote's
	hists    *ipc.HistogramsFile
	lat      latencies
}

// latencies are the demo's latency histograms: tick-to-order (recorded
// by the exchange; with -ipc in the exchange process's own file),
// tick-to-trade (by the strategy) and the stages of tick-to-order on the
// trader's side (see stages).
type latencies struct {
	t2o, t2t *latency
	stages   *stages
}

// stages are the points on an order's way to the exchange, each a
// histogram of the time from its quote's generation to that point
// (cumulative, so that every histogram counts from one clock reading, the
// feed's), for one quote in stageSampleEvery. An agent holds the stages
// of its process; the -ipc exchange process has only its own.
type stages [numStages]*latency

const (
	stageQuoteAtStrategy  = iota // the strategy has decoded the quote
	stageOrderOutStrategy        // the strategy has sent the quote's order to risk
	stageOrderAtRisk             // risk has decoded the order
	stageOrderOutRisk            // risk has sent it to the exchange
	stageOrderAtExchange         // the exchange has decoded it: tick-to-order
	numStages
)

// stageNames are the stages' names in the final table.
var stageNames = [numStages]string{
	"quote at strategy", "order out of strategy", "order at risk", "order out of risk", "order at exchange",
}

// stageSampleEvery: one quote in this many is followed through the stages.
// A reading of the clock and a histogram record per stage cost about as
// much as a stage's own work, so following every quote would slow the
// pipeline that tick-to-order measures; a sample of one in 16 leaves it
// nearly as it is and still counts thousands of quotes per second.
const stageSampleEvery = 16

// stageSampled reports whether the quote stamped origin is followed: a
// hash of the timestamp, so that every agent on the way, in this process
// or another, makes the same choice from the OriginNanos its message
// carries, with no flag in the message. A multiplicative hash so that the
// choice does not depend on the clock's resolution (a clock that only
// counted in microseconds would leave the low bits constant).
func stageSampled(origin int64) bool {
	return uint64(origin)*0x9e3779b97f4a7c15>>60 == 0 // the top 4 bits: 1 in 16
}

// record records stage i for a message whose quote was generated at
// origin, reading the clock once, if that quote is sampled; s may be nil
// (no stages: tests).
func (s *stages) record(i int, clock func() int64, origin int64) {
	if s != nil && stageSampled(origin) {
		s[i].record(clock(), origin)
	}
}

// Histograms of demo.histograms, and the one of exchange.histograms.
var (
	demoHistograms = []ipc.HistogramSpec{
		{Label: "tick-to-order ns", Config: histConfig},
		{Label: "tick-to-trade ns", Config: histConfig},
		{Label: "tick-to-strategy ns", Config: histConfig},
		{Label: "tick-to-strategy-out ns", Config: histConfig},
		{Label: "tick-to-risk ns", Config: histConfig},
		{Label: "tick-to-risk-out ns", Config: histConfig},
		{Label: "tick-to-order-sampled ns", Config: histConfig},
	}
	exchangeHistograms = []ipc.HistogramSpec{demoHistograms[0], demoHistograms[firstStageHistogram+stageOrderAtExchange]}
)

// firstStageHistogram is the index in demoHistograms of stage 0, and
// exchangeStageHistogram that of stageOrderAtExchange in
// exchangeHistograms.
const (
	firstStageHistogram    = 2
	exchangeStageHistogram = 1
)

// openStats makes the in-process demo's directory and counters file, or,
// with -ipc, uses those of the remote exchange's setup.
func openStats(cfg config, remote *remoteExchange) (*statsFiles, error) {
	if remote != nil {
		s := &statsFiles{dir: remote.dir, counters: remote.demoCtr}
		return s, s.openHistograms()
	}
	s := &statsFiles{dir: cfg.Dir, own: true}
	if s.dir == "" {
		base := ipc.DefaultDir()
		if err := os.MkdirAll(base, 0o700); err != nil {
			return nil, err
		}
		dir, err := os.MkdirTemp(base, "trading-")
		if err != nil {
			return nil, err
		}
		s.dir, s.ownDir = dir, true
	}
	var err error
	if s.counters, err = ipc.CreateCounters(s.dir, fileDemoCounters, statsCounters, nil, ipc.WithReplaceStale()); err != nil {
		return nil, errors.Join(err, s.close())
	}
	if err := s.openHistograms(); err != nil {
		return nil, errors.Join(err, s.close())
	}
	return s, nil
}

// openHistograms creates demo.histograms, the latencies' file.
func (s *statsFiles) openHistograms() error {
	var err error
	if s.hists, err = ipc.CreateHistograms(s.dir, fileDemoHistograms, demoHistograms, ipc.WithReplaceStale()); err != nil {
		return err
	}
	s.lat = latencies{t2o: fileLatency(s.hists, 0), t2t: fileLatency(s.hists, 1), stages: new(stages)}
	for i := range s.lat.stages {
		s.lat.stages[i] = fileLatency(s.hists, firstStageHistogram+i)
	}
	return nil
}

// manager is the counters manager mailboxes and runners publish into.
func (s *statsFiles) manager() *counters.Manager { return s.counters.Manager() }

// runnerOption makes a runner publish its statistics live.
func (s *statsFiles) runnerOption() runner.Option { return runner.WithCounters(s.manager()) }

// announce says where to watch from.
func (s *statsFiles) announce(w io.Writer) {
	fmt.Fprintf(w, "watch it: go run ./cmd/dutystat -dir %s -watch   (live page and Prometheus: -serve :9464, open http://localhost:9464/)\n", s.dir)
}

// heartbeat keeps the counters file's owner heartbeat fresh (the run loop
// calls it every second; -ipc: the remote's heartbeat does).
func (s *statsFiles) heartbeat() {
	now := time.Now().UnixMilli()
	if s.own {
		_ = s.counters.File.Heartbeat(now)
	}
	if s.hists != nil {
		_ = s.hists.File.Heartbeat(now)
	}
}

// close removes and closes what openStats created: after the runners and
// mailboxes that publish into it have stopped.
func (s *statsFiles) close() error {
	var errs []error
	if s.hists != nil {
		errs = append(errs, s.hists.File.Remove(), s.hists.Close())
	}
	if s.own && s.counters != nil {
		errs = append(errs, s.counters.File.Remove(), s.counters.Close())
	}
	if s.ownDir {
		errs = append(errs, os.RemoveAll(s.dir))
	}
	return errors.Join(errs...)
}

// fileErrors is the log of an error log file this process created.
func fileErrors(f *ipc.ErrorLogFile) *agentErrors {
	return &agentErrors{log: f.Log(), read: func(fn func(errlog.Observation)) (int, error) { return f.Read(0, fn) }}
}
