package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"go.uber.org/fx"

	"github.com/dutyrt/duty/counters"
	"github.com/dutyrt/duty/dutyfx"
	"github.com/dutyrt/duty/ipc"
	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/runner"
)

// The -role exchange process of -ipc and -nats: the exchange agent alone,
// with its mailboxes and counters in shared files (see ipc.go).

// Labels of the exchange's counters in exchange.counters, indexed like
// the exchange agent's words (pending first, then the pubExch... ones).
const labelPending = "trading exchange: pending output"

var exchangeLabels = [1 + numExchPub]string{
	labelPending,
	"trading exchange: client orders in",
	"trading exchange: reports out",
	"trading exchange: fills out",
	"trading exchange: messages lost",
}

// findCounter returns the value word of the allocated counter labelled
// label (read-only when the file is mapped read-only).
func findCounter(c *ipc.CountersFile, label string) (*atomic.Int64, error) {
	rd := c.Reader()
	id := -1
	err := rd.ForEachRecord(func(rec counters.Record) bool {
		if rec.TypeID == counterType && string(rec.Label) == label {
			id = rec.ID
			return false
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	if id < 0 {
		return nil, fmt.Errorf("trading: %s has no counter %q", c.File.Path(), label)
	}
	return rd.Word(id)
}

// exchangeWords are the exchange agent's published words.
type exchangeWords words

// runExchangeProcess is -role exchange: the exchange agent alone, on its
// runner, with its mailbox in shared memory. It ends when the demo closes
// exchange.in (or on SIGINT/SIGTERM, or when the demo that started it is
// gone), then writes exchange.json.
func runExchangeProcess(ctx context.Context, cfg config, stdout, stderr io.Writer) (ok bool, err error) {
	logger := slog.New(slog.NewTextHandler(stderr, nil)).With("process", roleExchange)
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return false, err
	}
	ppid := os.Getppid()
	var closers []func() error
	defer func() {
		for i := len(closers) - 1; i >= 0; i-- {
			err = errors.Join(err, closers[i]())
		}
	}()

	ctr, err := ipc.CreateCounters(cfg.Dir, fileExchangeCounters, statsCounters, nil, ipc.WithReplaceStale())
	if err != nil {
		return false, err
	}
	closers = append(closers, func() error { return errors.Join(ctr.File.Remove(), ctr.Close()) })
	hists, err := ipc.CreateHistograms(cfg.Dir, fileExchangeHists, exchangeHistograms, ipc.WithReplaceStale())
	if err != nil {
		return false, err
	}
	closers = append(closers, func() error { return errors.Join(hists.File.Remove(), hists.Close()) })
	xerrs, err := ipc.CreateErrorLog(cfg.Dir, fileExchangeErrors, errLogLength, ipc.WithReplaceStale())
	if err != nil {
		return false, err
	}
	closers = append(closers, func() error { return errors.Join(xerrs.File.Remove(), xerrs.Close()) })
	agentErrs := fileErrors(xerrs)
	w := make(exchangeWords, len(exchangeLabels))
	for i, label := range exchangeLabels {
		c, err := ctr.Manager().Allocate(label, counterType, nil)
		if err != nil {
			return false, err
		}
		w[i] = c.Word()
	}

	var mbs *mailboxes
	var link *natsLink // -nats: the bridges instead of the shared mailbox files (nats.go)
	if cfg.NATS != "" {
		if link, err = startNATSExchange(cfg, ctr.Manager(), w[0], logger); err != nil {
			return false, err
		}
		closers = append(closers, link.close)
		mbs = link.mbs
	} else {
		in, inFile, err := ipc.CreateMailbox(cfg.Dir, fileExchangeIn,
			mailbox.Config{Name: fileExchangeIn, Capacity: cfg.Capacity}, ipc.WithCounters(ctr), ipc.WithReplaceStale())
		if err != nil {
			return false, err
		}
		closers = append(closers, func() error { return errors.Join(inFile.File.Remove(), inFile.Close()) })
		openCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		var resp [2]*mailbox.Mailbox
		for i, name := range []string{fileStrategyResp, fileRiskResp} {
			var f *ipc.MailboxFile
			if resp[i], f, err = ipc.OpenMailbox(openCtx, filepath.Join(cfg.Dir, name), ipc.WithWaitForFile()); err != nil {
				return false, err
			}
			closers = append(closers, f.Close)
		}
		mbs = &mailboxes{exchangeIn: in, strategyResp: resp[0], riskResp: resp[1]}
	}

	ts := []thread{{roleExchange, []string{roleExchange}}}
	var x *exchangeAgent
	var group *runner.Group
	app := fx.New(
		fxLogger(cfg, stderr),
		fx.Supply(cfg, clockFunc(monoNanos), mbs, w,
			latencies{t2o: fileLatency(hists, 0), stages: &stages{stageOrderAtExchange: fileLatency(hists, exchangeStageHistogram)}},
			runnerConfig(cfg, ts, logger, agentErrs, runner.WithCounters(ctr.Manager()))),
		exchangeModule(),
		threadsModule(ts),
		dutyfx.Runners,
		fx.Populate(&x, &group),
	)
	rec, err := startApp(app, cfg, handles{Exchange: x}) // -record: the exchange's input
	if err != nil {
		return false, err
	}
	defer rec.closeAll()
	var problems []string
	rn := group.Runner(roleExchange)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	stopping := false
	stop := func(why string) {
		if !stopping {
			stopping = true
			logger.Warn("stopping before the demo's end", "why", why)
			problems = append(problems, "the exchange process stopped early: "+why)
			_, _ = mbs.exchangeIn.Close(mailbox.Drain)
		}
	}
	// The drain timeout is armed once, by the first reason to stop: a
	// cancelled ctx is ready on every pass, so its case is disabled after
	// it fired (re-arming the timeout on each pass spun a CPU and never
	// let the timeout fire).
	var stopTimeout <-chan time.Time
	armStop := func(why string) {
		stop(why)
		if stopTimeout == nil {
			stopTimeout = time.After(cfg.Drain)
		}
	}
	signalled := ctx.Done()
wait:
	for {
		select {
		case <-rn.Done():
			break wait
		case <-signalled:
			signalled = nil
			armStop("signal")
		case <-tick.C:
			now := time.Now().UnixMilli()
			_ = ctr.File.Heartbeat(now)
			_ = xerrs.File.Heartbeat(now)
			if cfg.WatchParent && os.Getppid() != ppid {
				armStop("the demo process is gone")
			}
		case <-stopTimeout:
			break wait
		}
	}
	stopCtx, cancel3 := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel3()
	if err := app.Stop(stopCtx); err != nil {
		problems = append(problems, "exchange process: stopping: "+err.Error())
	}
	if err := rn.Err(); err != nil {
		problems = append(problems, fmt.Sprintf("exchange agent failed: %v", err))
	}
	problems = append(problems, rec.end()...)
	problems = append(problems, link.losses()...)

	observed, err := agentErrs.observations()
	if err != nil {
		problems = append(problems, "exchange process: reading its error log: "+err.Error())
	}
	sum := exchangeSummary{Exchange: x.summary(), Errors: problems, AgentErrors: observed}
	t2o, _ := x.t2o.total()
	t2oS, _ := x.stages[stageOrderAtExchange].total()
	sum.T2O, sum.T2OSampled = t2o.Export(), t2oS.Export()
	data, err := json.Marshal(&sum)
	if err != nil {
		return false, err
	}
	tmp := filepath.Join(cfg.Dir, fileSummary+".tmp")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return false, err
	}
	if err := os.Rename(tmp, filepath.Join(cfg.Dir, fileSummary)); err != nil {
		return false, err
	}
	c := sum.Exchange
	fmt.Fprintf(stdout, "exchange process: %d quotes, %d orders, %d reports, %d book checks (%d failed)\n",
		c.Counts.Quotes, c.Counts.Orders, c.Counts.Reports.Total(), c.Checks, c.CheckErrs)
	return len(problems) == 0 && c.CheckErrs == 0, nil
}
