package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"go.uber.org/fx"

	"github.com/dutyrt/duty/counters"
	"github.com/dutyrt/duty/dutyfx"
	"github.com/dutyrt/duty/errlog"
	"github.com/dutyrt/duty/ipc"
	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/runner"
)

// -ipc mode: the exchange runs in a second process. Three mailboxes cross
// the process boundary, each a shared-memory file in one directory, owned
// (created and drained) by the process that receives:
//
//	exchange.in     owner: the exchange process; senders: feed, risk
//	strategy.resp   owner: the demo;             senders: exchange, risk
//	risk.resp       owner: the demo;             sender:  exchange
//
// strategy.in and risk.in stay in the demo's memory. The exchange process
// also creates exchange.counters, a counters file with its published
// counters (the demo reads its pending-output word while draining; dutystat
// can watch them), and the demo creates demo.counters for its mailboxes'
// statistics. Each side waits for the other's files, so either may start
// first.
//
// The end: after the drain, the demo closes exchange.in (the state word is
// in the shared file); the exchange agent finishes once it is closed and
// empty, the exchange process checks its books and writes exchange.json
// (its counts and its tick-to-order histogram) into the directory, and
// exits. The demo reads the file and reconciles both sides.

const (
	fileExchangeIn       = "exchange.in"
	fileStrategyResp     = "strategy.resp"
	fileRiskResp         = "risk.resp"
	fileExchangeCounters = "exchange.counters"
	fileDemoCounters     = "demo.counters"
	fileDemoHistograms   = "demo.histograms"
	fileExchangeHists    = "exchange.histograms"
	fileDemoErrors       = "demo.errors"
	fileExchangeErrors   = "exchange.errors"
	fileSummary          = "exchange.json"

	// envMain makes a test binary run the demo's main (the tests re-execute
	// themselves as the demo and as its exchange process).
	envMain = "DUTY_TRADING_MAIN"

	// counterType is the type id of the exchange's counters in
	// exchange.counters (user range, above duty's own).
	counterType = 10_001
)

// exchangeSummary is exchange.json.
type exchangeSummary struct {
	Exchange exchangeCounts
	T2O      *hdrhistogram.Snapshot
	// T2OSampled is the exchange's stage of the sampled quotes (stages).
	T2OSampled *hdrhistogram.Snapshot
	Errors     []string
	// AgentErrors is the exchange process's error log at its end.
	AgentErrors []errlog.Observation
}

// remoteExchange is the exchange process seen from the demo: the shared
// files, the child process (unless started by hand) and its summary.
type remoteExchange struct {
	cfg     config
	dir     string
	ownDir  bool
	mbs     *mailboxes
	in      *ipc.MailboxFile // sender
	sResp   *ipc.MailboxFile // owner
	rResp   *ipc.MailboxFile // owner
	demoCtr *ipc.CountersFile
	errs    *ipc.ErrorLogFile // this process's agent errors
	xCtr    *ipc.CountersFile // read-only

	cmd     *exec.Cmd
	exited  chan struct{} // closed when the child has exited (never without a child)
	waitErr error         // the child's exit, once exited is closed

	sum      *exchangeSummary
	t2o      *hdrhistogram.Histogram
	t2oS     *hdrhistogram.Histogram // the sampled quotes' (stages)
	problems []string

	nats *natsLink // -nats: the bridges instead of the shared mailbox files (nats.go)
}

// startRemote creates the demo's files, starts the exchange process
// (cfg.Spawn) and opens its files. close releases everything, on every
// path.
func startRemote(cfg config, stderr io.Writer) (_ *remoteExchange, err error) {
	r := &remoteExchange{cfg: cfg, dir: cfg.Dir, exited: make(chan struct{})}
	defer func() {
		if err != nil {
			err = errors.Join(err, r.close())
		}
	}()
	if r.dir == "" {
		base := ipc.DefaultDir()
		if err := os.MkdirAll(base, 0o700); err != nil {
			return r, err
		}
		if r.dir, err = os.MkdirTemp(base, "trading-"); err != nil {
			return r, err
		}
		r.ownDir = true
	} else if err := os.MkdirAll(r.dir, 0o700); err != nil {
		return r, err
	}
	// A summary left by an earlier run in the same directory is not ours.
	if err := os.Remove(filepath.Join(r.dir, fileSummary)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return r, err
	}
	if r.demoCtr, err = ipc.CreateCounters(r.dir, fileDemoCounters, statsCounters, nil, ipc.WithReplaceStale()); err != nil {
		return r, err
	}
	if r.errs, err = ipc.CreateErrorLog(r.dir, fileDemoErrors, errLogLength, ipc.WithReplaceStale()); err != nil {
		return r, err
	}
	r.mbs = &mailboxes{}
	if cfg.NATS != "" {
		return r, r.startNATS(stderr)
	}
	create := func(name string) (*mailbox.Mailbox, *ipc.MailboxFile, error) {
		return ipc.CreateMailbox(r.dir, name, mailbox.Config{Name: name, Capacity: cfg.Capacity},
			ipc.WithCounters(r.demoCtr), ipc.WithReplaceStale())
	}
	if r.mbs.strategyResp, r.sResp, err = create(fileStrategyResp); err != nil {
		return r, err
	}
	if r.mbs.riskResp, r.rResp, err = create(fileRiskResp); err != nil {
		return r, err
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if cfg.Spawn {
		if err := r.spawn(stderr); err != nil {
			return r, err
		}
		go func() {
			select {
			case <-r.exited:
				cancel() // the child died before its files appeared
			case <-ctx.Done():
			}
		}()
	}
	if r.mbs.exchangeIn, r.in, err = ipc.OpenMailbox(ctx, filepath.Join(r.dir, fileExchangeIn), ipc.WithWaitForFile()); err != nil {
		if r.childExited() {
			err = fmt.Errorf("%w (the exchange process exited: %v)", err, r.waitErr)
		}
		return r, err
	}
	if r.xCtr, err = ipc.OpenCounters(ctx, filepath.Join(r.dir, fileExchangeCounters), ipc.WithWaitForFile()); err != nil {
		return r, err
	}
	pending, err := findCounter(r.xCtr, labelPending)
	if err != nil {
		return r, err
	}

	r.mbs.exchangePending = pending
	local := func(name string) (*mailbox.Mailbox, error) {
		return mailbox.New(mailbox.Config{Name: name, Capacity: cfg.Capacity, Counters: r.demoCtr.Manager()})
	}
	if r.mbs.strategyIn, err = local("strategy.in"); err != nil {
		return r, err
	}
	if r.mbs.riskIn, err = local("risk.in"); err != nil {
		return r, err
	}
	return r, nil
}

// spawn starts this program again as the exchange process, in its own
// process group (a Ctrl-C in the terminal reaches only the demo, which
// ends the exchange itself, after the drain).
func (r *remoteExchange) spawn(stderr io.Writer) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	c := r.cfg
	args := []string{
		"-role", roleExchange, "-dir", r.dir, "-watch-parent",
		"-instruments", strconv.Itoa(c.Instruments), "-threads", strconv.Itoa(c.Threads),
		"-idle", c.IdleSpec, "-cpus", c.CPUSpec, "-mailbox", strconv.Itoa(c.Capacity),
	}
	if c.Verbose {
		args = append(args, "-v")
	}
	if r.nats != nil {
		args = append(args, "-nats="+r.nats.url)
	}
	if c.dropReport > 0 {
		args = append(args, "-lose-report", strconv.FormatInt(c.dropReport, 10))
	}
	if c.Record != "" {
		args = append(args, "-record", c.Record)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), envMain+"=1")
	cmd.Stdout, cmd.Stderr = stderr, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("trading: starting the exchange process: %w", err)
	}
	r.cmd = cmd
	go func() {
		r.waitErr = cmd.Wait()
		close(r.exited)
	}()
	return nil
}

func (r *remoteExchange) childExited() bool {
	select {
	case <-r.exited:
		return true
	default:
		return false
	}
}

// done is closed when the exchange process exits (nil, never closed,
// without a child or without -ipc).
func (r *remoteExchange) done() <-chan struct{} {
	if r == nil || r.cmd == nil {
		return nil
	}
	return r.exited
}

// heartbeat refreshes the owner heartbeat of demo.counters (the
// mailboxes' files are refreshed by their drains).
func (r *remoteExchange) heartbeat() {
	if r == nil {
		return
	}
	now := time.Now().UnixMilli()
	if r.demoCtr != nil {
		_ = r.demoCtr.File().Heartbeat(now)
	}
	if r.errs != nil {
		_ = r.errs.File().Heartbeat(now)
	}
}

// finish ends the exchange process: it closes exchange.in (seen by the
// exchange through the shared state word) and waits, up to limit, for
// the summary the exchange writes when it has drained and stopped.
func (r *remoteExchange) finish(limit time.Duration) {
	if _, err := r.mbs.exchangeIn.Close(mailbox.Drain); err != nil {
		r.problems = append(r.problems, "closing exchange.in: "+err.Error())
	}
	if r.nats != nil {
		r.problems = append(r.problems, r.nats.end(limit)...)
	}
	deadline := time.After(limit)
	if r.cmd != nil {
		select {
		case <-r.exited:
			if r.waitErr != nil {
				r.problems = append(r.problems, fmt.Sprintf("the exchange process failed: %v", r.waitErr))
			}
		case <-deadline:
			r.problems = append(r.problems, fmt.Sprintf("the exchange process did not finish within %v", limit))
			return
		}
	}
	path := filepath.Join(r.dir, fileSummary)
	for {
		b, err := os.ReadFile(path)
		if err == nil {
			var s exchangeSummary
			if err := json.Unmarshal(b, &s); err != nil {
				r.problems = append(r.problems, fmt.Sprintf("%s: %v", path, err))
				return
			}
			r.sum = &s
			if s.T2O != nil {
				r.t2o = hdrhistogram.Import(s.T2O)
			}
			if s.T2OSampled != nil {
				r.t2oS = hdrhistogram.Import(s.T2OSampled)
			}
			r.problems = append(r.problems, s.Errors...)
			return
		}
		if !errors.Is(err, os.ErrNotExist) || r.cmd != nil {
			r.problems = append(r.problems, "no summary from the exchange process: "+err.Error())
			return
		}
		select {
		case <-deadline:
			r.problems = append(r.problems, fmt.Sprintf("no summary from the exchange process within %v", limit))
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// agentErrors returns the exchange process's agent errors, their texts
// marked with the process.
func (r *remoteExchange) agentErrors() []errlog.Observation {
	if r == nil || r.sum == nil {
		return nil
	}
	obs := slices.Clone(r.sum.AgentErrors)
	for i := range obs {
		obs[i].Text = "exchange process: " + obs[i].Text
	}
	return obs
}

// summary returns the exchange's counts and adds the problems met with
// the exchange process.
func (r *remoteExchange) summary(problems []string) (exchangeCounts, []string) {
	problems = append(problems, r.problems...)
	if r.sum == nil {
		return exchangeCounts{}, problems
	}
	return r.sum.Exchange, problems
}

// close releases the files and the child, on any path: it gives a child
// still running a few seconds to finish, then kills it.
func (r *remoteExchange) close() error {
	var errs []error
	if r.cmd != nil {
		select {
		case <-r.exited:
		case <-time.After(5 * time.Second):
			errs = append(errs, fmt.Errorf("trading: killing the exchange process %d", r.cmd.Process.Pid))
			_ = r.cmd.Process.Kill()
			<-r.exited
		}
	}
	errs = append(errs, r.nats.close()) // before the counters file its bridges write
	for _, m := range []*ipc.MailboxFile{r.in, r.sResp, r.rResp} {
		if m == nil {
			continue
		}
		if m.IsOwner() {
			errs = append(errs, m.File().Remove())
		}
		errs = append(errs, m.Close())
	}
	if r.xCtr != nil {
		errs = append(errs, r.xCtr.Close())
	}
	if r.demoCtr != nil {
		errs = append(errs, r.demoCtr.File().Remove(), r.demoCtr.Close())
	}
	if r.errs != nil {
		errs = append(errs, r.errs.File().Remove(), r.errs.Close())
	}
	if r.ownDir && r.dir != "" {
		errs = append(errs, os.RemoveAll(r.dir))
	}
	return errors.Join(errs...)
}

// Labels of the exchange's counters in exchange.counters, indexed like
// the exchange agent's words (pending first, then the pubExch... ones).
const labelPending = "trading exchange: pending output"

var exchangeLabels = [1 + numExchPub]string{
	labelPending,
	"trading exchange: client orders in",
	"trading exchange: reports out",
	"trading exchange: fills out",
	"trading exchange: messages lost",
	"trading exchange: bad messages",
}

// findCounter returns the value word of the allocated counter labelled
// label (read-only when the file is mapped read-only).
func findCounter(c *ipc.CountersFile, label string) (*atomic.Int64, error) {
	rd, err := c.NewReader()
	if err != nil {
		return nil, err
	}
	id := -1
	err = rd.ForEachRecord(func(rec counters.Record) bool {
		i, typeID, l := rec.ID, rec.TypeID, string(rec.Label)
		if typeID == counterType && l == label {
			id = i
			return false
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	if id < 0 {
		return nil, fmt.Errorf("trading: %s has no counter %q", c.File().Path(), label)
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
	closers = append(closers, func() error { return errors.Join(ctr.File().Remove(), ctr.Close()) })
	hists, err := ipc.CreateHistograms(cfg.Dir, fileExchangeHists, exchangeHistograms, ipc.WithReplaceStale())
	if err != nil {
		return false, err
	}
	closers = append(closers, func() error { return errors.Join(hists.File().Remove(), hists.Close()) })
	xerrs, err := ipc.CreateErrorLog(cfg.Dir, fileExchangeErrors, errLogLength, ipc.WithReplaceStale())
	if err != nil {
		return false, err
	}
	closers = append(closers, func() error { return errors.Join(xerrs.File().Remove(), xerrs.Close()) })
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
		closers = append(closers, func() error { return errors.Join(inFile.File().Remove(), inFile.Close()) })
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
	if err := app.Err(); err != nil {
		return false, err
	}
	x.exitWhenClosed = true
	rec, err := startRecording(cfg, handles{Exchange: x}) // -record: the exchange's input
	if err != nil {
		return false, err
	}
	defer rec.closeAll()
	startCtx, cancel2 := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel2()
	if err := app.Start(startCtx); err != nil {
		return false, err
	}
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
			_ = ctr.File().Heartbeat(now)
			_ = xerrs.File().Heartbeat(now)
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
	h := newHist()
	x.t2o.final(h)
	sum.T2O = h.Export()
	hs := newHist()
	x.stages[stageOrderAtExchange].final(hs)
	sum.T2OSampled = hs.Export()
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
