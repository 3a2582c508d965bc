package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"go.uber.org/fx"

	"github.com/dutyrt/duty/dutyfx"
	"github.com/dutyrt/duty/errlog"
	"github.com/dutyrt/duty/ipc"
	"github.com/dutyrt/duty/mailbox"
)

// Every process keeps its statistics in shared files of one directory,
// which dutystat shows live: <process>.counters, .histograms (latencies)
// and .errors (its agents' distinct errors), and with -ipc the mailboxes
// between the processes, each created by its consumer (exchange.in by the
// exchange process, strategy.resp and risk.resp by the demo).
const (
	fileExchangeIn   = "exchange.in"
	fileStrategyResp = "strategy.resp"
	fileRiskResp     = "risk.resp"
	fileSummary      = "exchange.json" // the exchange process's counts at its end

	// statsCounters is the room of a counters file: ten counters a
	// mailbox and five a runner, with room to spare.
	statsCounters = 128
)

// latencies are a process's latency histograms.
type latencies struct {
	t2o, t2t *latency
	stages   *stages
}

// Histograms of demo.histograms; exchange.histograms has tick-to-order
// and its last stage.
var demoHistograms = []ipc.HistogramSpec{
	{Label: "tick-to-order ns", Config: histConfig},
	{Label: "tick-to-trade ns", Config: histConfig},
	{Label: "tick-to-strategy ns", Config: histConfig},
	{Label: "tick-to-strategy-out ns", Config: histConfig},
	{Label: "tick-to-risk ns", Config: histConfig},
	{Label: "tick-to-risk-out ns", Config: histConfig},
	{Label: "tick-to-order-sampled ns", Config: histConfig},
}

// procFiles are one process's shared files: those it created (heartbeaten,
// removed at the end) and those of the other process it opened.
type procFiles struct {
	dir     string
	ownDir  bool // made by the demo: removed whole at the end
	ctr     *ipc.CountersFile
	errs    *agentErrors
	lat     latencies
	keeper  *ipc.Keeper // heartbeats the files it created, run by the group
	closers []func() error
}

// openFiles creates process's counters, histograms and error log in dir
// ("": a new directory under ipc.DefaultDir()).
func openFiles(dir, process string) (f *procFiles, err error) {
	f = &procFiles{dir: dir}
	if f.keeper, err = ipc.NewKeeper(keeperRole(process), time.Second/2); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, f.close())
		}
	}()
	if f.dir == "" {
		if err := os.MkdirAll(ipc.DefaultDir(), 0o700); err != nil {
			return f, err
		}
		if f.dir, err = os.MkdirTemp(ipc.DefaultDir(), "trading-"); err != nil {
			return f, err
		}
		f.ownDir = true
	} else if err := os.MkdirAll(f.dir, 0o700); err != nil {
		return f, err
	}
	if f.ctr, err = ipc.CreateCounters(f.dir, process+".counters", statsCounters, nil, ipc.WithReplaceStale()); err != nil {
		return f, err
	}
	if err := f.own(f.ctr.File, f.ctr.Close); err != nil {
		return f, err
	}
	specs := demoHistograms
	if process == roleExchange {
		specs = []ipc.HistogramSpec{demoHistograms[0], demoHistograms[len(demoHistograms)-1]}
	}
	hists, err := ipc.CreateHistograms(f.dir, process+".histograms", specs, ipc.WithReplaceStale())
	if err != nil {
		return f, err
	}
	if err := f.own(hists.File, hists.Close); err != nil {
		return f, err
	}
	if process == roleExchange {
		f.lat = latencies{t2o: fileLatency(hists, 0), stages: &stages{stageOrderAtExchange: fileLatency(hists, 1)}}
	} else {
		f.lat = latencies{t2o: fileLatency(hists, 0), t2t: fileLatency(hists, 1), stages: new(stages)}
		for i := range f.lat.stages {
			f.lat.stages[i] = fileLatency(hists, 2+i)
		}
	}
	el, err := ipc.CreateErrorLog(f.dir, process+".errors", errLogLength, ipc.WithReplaceStale())
	if err != nil {
		return f, err
	}
	f.errs = &agentErrors{log: el.Log(), read: func(fn func(errlog.Observation)) (int, error) { return el.Read(0, fn) }}
	return f, f.own(el.File, el.Close)
}

// own makes file removed and closed (by closeFn) at the end, and
// heartbeaten until then.
func (f *procFiles) own(file *ipc.File, closeFn func() error) error {
	f.closers = append(f.closers, func() error { f.keeper.Remove(file); return errors.Join(file.Remove(), closeFn()) })
	return f.keeper.Add(file)
}

// mailbox creates the mailbox file name, owned by this process.
func (f *procFiles) mailbox(name string, capacity int) (*mailbox.Mailbox, error) {
	mb, mf, err := ipc.CreateMailbox(f.dir, name, mailbox.Config{Name: name, Capacity: capacity}, ipc.WithCounters(f.ctr), ipc.WithReplaceStale())
	if err != nil {
		return nil, err
	}
	return mb, f.own(mf.File, mf.Close)
}

// openMailbox opens the other process's mailbox file name, waiting for it.
func (f *procFiles) openMailbox(ctx context.Context, name string) (*mailbox.Mailbox, error) {
	mb, mf, err := ipc.OpenMailbox(ctx, filepath.Join(f.dir, name), ipc.WithWaitForFile())
	if err != nil {
		return nil, err
	}
	f.closers = append(f.closers, mf.Close)
	return mb, nil
}

// announce says where to watch from.
func (f *procFiles) announce(w io.Writer) {
	fmt.Fprintf(w, "watch it: go run ./cmd/dutystat -dir %s -watch   (live page and Prometheus: -serve :9464, open http://localhost:9464/)\n", f.dir)
}

// keeperRole is the role of process's keeper and of its thread.
func keeperRole(process string) string { return process + "-files" }

// keeperIdle is the keeper thread's idle strategy: it has work once a
// heartbeat period, and waking often on the pipeline's CPUs delays the
// stages.
const keeperIdle = "sleep-ms:100"

// keeperModule runs the files' keeper in the process's group.
func (f *procFiles) keeperModule() fx.Option {
	return fx.Options(fx.Supply(f.keeper), dutyfx.Include[*ipc.Keeper]())
}

// close closes, last first, and removes what this process created.
func (f *procFiles) close() error {
	var errs []error
	for i := len(f.closers) - 1; i >= 0; i-- {
		errs = append(errs, f.closers[i]())
	}
	f.closers = nil
	if f.ownDir {
		errs = append(errs, os.RemoveAll(f.dir))
	}
	return errors.Join(errs...)
}
