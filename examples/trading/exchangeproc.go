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

// counterType is the type id of the exchange's counters (user range).
const counterType = 10_001

// exchangeLabels label the exchange agent's words in exchange.counters.
var exchangeLabels = [1 + numExchPub]string{
	"trading exchange: pending output",
	"trading exchange: client orders in",
	"trading exchange: reports out",
	"trading exchange: fills out",
	"trading exchange: messages lost",
}

// findCounter returns the value word of the counter labelled label.
func findCounter(c *ipc.CountersFile, label string) (*atomic.Int64, error) {
	rd := c.Reader()
	id := -1
	err := rd.ForEachRecord(func(rec counters.Record) bool {
		if rec.TypeID == counterType && string(rec.Label) == label {
			id = rec.ID
		}
		return id < 0
	})
	if err == nil && id < 0 {
		err = fmt.Errorf("trading: %s has no counter %q", c.File.Path(), label)
	}
	if err != nil {
		return nil, err
	}
	return rd.Word(id)
}

// exchangeWords are the exchange agent's published words.
type exchangeWords words

// runExchangeProcess is -role exchange: the exchange agent alone. It ends
// when the demo closes exchange.in (or, bounded by -drain, on a signal or
// when the demo is gone), then writes exchange.json.
func runExchangeProcess(ctx context.Context, cfg config, stdout, stderr io.Writer) (ok bool, err error) {
	logger := slog.New(slog.NewTextHandler(stderr, nil)).With("process", roleExchange)
	ppid := os.Getppid()
	files, err := openFiles(cfg.Dir, roleExchange)
	if err != nil {
		return false, err
	}
	defer func() { err = errors.Join(err, files.close()) }()
	w := make(exchangeWords, len(exchangeLabels))
	for i, label := range exchangeLabels {
		c, err := files.ctr.Manager().Allocate(label, counterType, nil)
		if err != nil {
			return false, err
		}
		w[i] = c.Word()
	}

	mbs := &mailboxes{}
	ts := []thread{{roleExchange, []string{roleExchange}}}
	var link *natsLink // -nats: bridges instead of the shared mailbox files
	bridges := fx.Options()
	if cfg.NATS != "" {
		var th thread
		if link, bridges, th, err = newNATSExchange(cfg, files.ctr.Manager(), w[0], logger); err != nil {
			return false, err
		}
		files.closers = append(files.closers, link.close)
		mbs, ts = link.mbs, append(ts, th)
	} else {
		if mbs.exchangeIn, err = files.mailbox(fileExchangeIn, cfg.Capacity); err != nil {
			return false, err
		}
		openCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if mbs.strategyResp, err = files.openMailbox(openCtx, fileStrategyResp); err != nil {
			return false, err
		}
		if mbs.riskResp, err = files.openMailbox(openCtx, fileRiskResp); err != nil {
			return false, err
		}
	}

	var x *exchangeAgent
	var group *runner.Group
	app := fx.New(
		fxLogger(cfg),
		fx.Supply(cfg, clockFunc(monoNanos), mbs, w, files.lat,
			runnerConfig(cfg, ts, logger, files.errs, runner.WithCounters(files.ctr.Manager()))),
		fx.Provide(newExchangeAgent), dutyfx.Include[*exchangeAgent](),
		dutyfx.Runners, bridges, files.keeperModule(),
		fx.Populate(&x, &group),
	)
	rec, err := startApp(app, cfg, handles{Exchange: x}) // -record: the exchange's input
	if err != nil {
		return false, err
	}
	defer rec.closeAll()
	if link != nil {
		if err := link.serve(); err != nil {
			return false, err
		}
	}
	var problems []string
	rn := group.Runner(roleExchange)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	// The first reason to stop early closes exchange.in and arms -drain.
	var stopTimeout <-chan time.Time
	stop := func(why string) {
		if stopTimeout == nil {
			logger.Warn("stopping before the demo's end", "why", why)
			problems = append(problems, "the exchange process stopped early: "+why)
			_, _ = mbs.exchangeIn.Close(mailbox.Drain)
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
			stop("signal")
		case <-tick.C:
			if cfg.WatchParent && os.Getppid() != ppid {
				stop("the demo process is gone")
			}
		case <-stopTimeout:
			break wait
		}
	}
	link.flush()
	stopCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := app.Stop(stopCtx); err != nil {
		problems = append(problems, "exchange process: stopping: "+err.Error())
	}
	if err := rn.Err(); err != nil {
		problems = append(problems, fmt.Sprintf("exchange agent failed: %v", err))
	}
	problems = append(problems, rec.end()...)
	problems = append(problems, link.losses()...)
	observed, err := files.errs.observations()
	if err != nil {
		problems = append(problems, "exchange process: reading its error log: "+err.Error())
	}
	for i := range observed {
		observed[i].Text = "exchange process: " + observed[i].Text
	}
	sum := exchangeSummary{Exchange: x.summary(), Errors: problems, AgentErrors: observed}
	sum.T2O, sum.T2OSampled = x.t2o.total(), x.stages[stageOrderAtExchange].total()
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
